"""The analytic FLOPs count: a hand count of a 1-layer BERT, and XLA's dots of real models."""
import pytest
import tensorflow as tf
import tf_keras

from bench import flops
from bench import hlo_flops
from bench import pretraining_setup
from modeling.layers.encoder_config import EncoderConfig
from tasks.bert_pretraining import BertPretrainingTask
from tasks.pretraining_task import PretrainingData

# 1 layer, V 50, E 16, H 32, 2 heads, FFN 64, 2 segment ids; S 8 tokens, P 2 masked.
ONE_LAYER = EncoderConfig(vocab_size=50, hidden_size=32, num_layers=1, num_attention_heads=2,
                          intermediate_size=64, embedding_size=16, max_sequence_length=8)


def test_one_layer_bert_matches_a_hand_count():
  task = BertPretrainingTask(ONE_LAYER, PretrainingData(seq_length=8,
                                                        max_predictions_per_seq=2))
  # Per sequence, forward. Matmuls, 2 * m * k * n:
  matmuls = (2 * 8 * 2 * 16       # type embeddings, one-hot [8, 2] x [2, 16]
             + 2 * 8 * 16 * 32    # E -> H projection
             + 3 * 2 * 8 * 32 * 32  # query, key, value
             + 2 * 8 * 32 * 8     # scores: 2 heads x [8, 16] x [16, 8]
             + 2 * 8 * 8 * 32     # probabilities x values
             + 2 * 8 * 32 * 32    # attention output
             + 2 * 8 * 32 * 64    # FFN in
             + 2 * 8 * 64 * 32    # FFN out
             + 2 * 2 * 32 * 16    # MLM transform, 2 masked positions
             + 2 * 2 * 16 * 50)   # vocabulary logits
  assert matmuls == 153216
  lookups = 2 * 8 * 50 * 16 + 2 * 8 * 8 * 16  # word, position tables as one-hot matmuls
  elementwise = (
      # embeddings: 2 adds, LayerNorm 5, dropout 4 on [8, 16]; projection bias [8, 32]
      (2 + 5 + 4) * 8 * 16 + 8 * 32
      # attention: q/k/v biases, query scaling; mask 1, softmax 5, dropout 4 per score
      # (2 heads x 8 x 8); output bias, dropout 4, residual 1, LayerNorm 5 on [8, 32]
      + 3 * 8 * 32 + 8 * 32 + (1 + 5 + 4) * 2 * 8 * 8 + (1 + 4 + 1 + 5) * 8 * 32
      # FFN: bias + GELU 8 on [8, 64]; output bias, dropout, residual, LayerNorm on [8, 32]
      + (1 + 8) * 8 * 64 + (1 + 4 + 1 + 5) * 8 * 32
      # MLM head: bias, GELU, LayerNorm on [2, 16]; logits bias and softmax 5 on [2, 50]
      + (1 + 8 + 5) * 2 * 16 + (1 + 5) * 2 * 50)
  assert elementwise == 15256
  forward = matmuls + lookups + elementwise
  # Backward: 2x for matmuls (both operands' gradients) except the one-hot type matmul
  # (1x: the table's gradient only), 1x for lookups, 2x for element-wise work.
  backward = 2 * (matmuls - 512) + 512 + lookups + 2 * elementwise
  batch = 3
  assert flops.step_totals(flops.objective_terms(task), batch) == dict(
      forward=batch * forward, train=batch * (forward + backward),
      paper_train=batch * 2 * forward,
      executed_train=batch * (forward + backward - 2 * lookups),
      matmul_forward=batch * matmuls, matmul_train=batch * (matmuls + 2 * matmuls - 512))


def test_relative_position_adds_one_flop_per_score_forward_and_one_backward():
  data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
  plain = flops.step_totals(flops.objective_terms(BertPretrainingTask(ONE_LAYER, data)), 1)
  relative = flops.step_totals(flops.objective_terms(BertPretrainingTask(
      ONE_LAYER.replace(relative_position="t5"), data)), 1)
  scores = 2 * 8 * 8  # 2 heads x 8 queries x 8 keys, one layer
  assert relative["forward"] - plain["forward"] == scores
  assert relative["train"] - plain["train"] == 2 * scores  # + the table's batch sum
  assert relative["matmul_train"] == plain["matmul_train"]


def test_dot_flops_reads_hlo_dots():
  hlo = "\n".join([
      "%p = f32[4,16]{1,0} parameter(0)",
      # [4, 16] x [16, 32]: 2 * 4 * 32 * 16
      "%dot.1 = f32[4,32]{1,0} dot(f32[4,16]{1,0} %p, f32[16,32]{1,0} %w), "
      "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
      # batch 2 x heads 3 x [5, 7] x [7, 5]: 2 * (2 * 3 * 5 * 5) * 7
      "%dot.2 = bf16[2,3,5,5]{3,2,1,0} dot(bf16[2,5,3,7]{3,2,1,0} %q, bf16[2,5,3,7]{3,2,1,0} "
      "%k), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_batch_dims={0,2}, "
      "rhs_contracting_dims={3}, metadata={op_type=\"Einsum\"}"])
  assert hlo_flops.dot_flops(hlo) == 2 * 4 * 32 * 16 + 2 * (2 * 3 * 5 * 5) * 7
  with pytest.raises(ValueError, match="Unreadable HLO dot"):
    hlo_flops.dot_flops("%d = f32[2]{0} dot(%a, %b)")


# TEAMS with 2 layers, so its RTD branch reads a Transformer layer, not the embeddings.
@pytest.mark.parametrize("objective,num_layers", [("electra", 1), ("teams", 2),
                                                  ("electra_hp_loss", 1), ("script", 1),
                                                  ("electric", 1),
                                                  ("electra_uniform_generator", 1)])
@pytest.mark.slow
def test_matmul_count_equals_xla_dots_of_the_real_model(objective, num_layers):
  tf_keras.mixed_precision.set_global_policy("float32")
  task = pretraining_setup.build_task(
      objective, "small", batch_size=2, seq_length=16, gin_params=[
          "encoder_config.size = 'tiny'", "encoder_config.vocab_size = 64",
          f"encoder_config.overrides = {{'num_layers': {num_layers}}}",
          # The fused kernels sum bias and LayerNorm gradients as ones-vector matmuls:
          # reductions, not model matmuls (see bench/hlo_flops.py).
          "make_transformer_block.fused_kernels = False"])
  model = task.build_model()
  batch = {name: tf.constant(values)
           for name, values in pretraining_setup.synthetic_examples(task, 2).items()}
  forward, train = hlo_flops.training_step_dot_flops(task, model, batch)
  totals = flops.step_totals(flops.objective_terms(task), batch_size=2)
  assert (forward, train) == (totals["matmul_forward"], totals["matmul_train"])
