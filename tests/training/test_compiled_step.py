"""jit_compile's whole-step XLA computation against the uncompiled step, every objective.

Same seeds, same batches: the per-step losses of the compiled step match the uncompiled
one's to rtol 1e-5 (XLA fuses and reorders float sums; sampling draws from stateless
Philox bits, which XLA reproduces exactly, so the generators' samples are the same: every
stateless op names alg="philox", since "auto_select" means another generator under XLA).
Dropout is 0: Keras' own Dropout layers draw from tf_keras' stateful generator
("legacy_stateful"), whose masks differ compiled or not.
"""
import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from bench import host_ops
from modeling.layers.encoder_config import encoder_config
from tasks.adversarial_electra_pretraining import AdversarialElectraPretrainingTask
from tasks.all_tokens_mlm_pretraining import AllTokensMlmPretrainingTask
from tasks.bert_pretraining import BertPretrainingTask
from tasks.electra_15_pretraining import Electra15PretrainingTask
from tasks.electra_hp_pretraining import ElectraHpPretrainingTask
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.finetuning_task import FinetuningData
from tasks.glue_task import GlueTask
from tasks.pretraining_task import PretrainingData
from tasks.replace_mlm_pretraining import ReplaceMlmPretrainingTask
from tasks.script_pretraining import ScriptPretrainingTask
from tasks.tagging_task import TaggingTask
from tasks.teams_pretraining import TeamsPretrainingTask
from tasks.two_stage_electra_pretraining import TwoStageElectraPretrainingTask
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.pretraining import PREDICTIONS
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import SEQ
from tests.kit.pretraining import VOCAB
from tests.kit.trainers import pretraining_trainer as build_trainer
from tests.tasks.test_glue_task import _sst2_like
from tests.tasks.test_tagging_task import conll2003_records
from training import precision
from training.finetuning_trainer import FinetuningTrainer
from training.optimization import create_optimizer
from training.trainer import whole_step_compiles

STEPS, RTOL = 3, 1e-5


def _task(objective, relative_position="none"):
  """A tiny task of `objective` (vocab 60, seq 16, 3 predictions, batch 4, no dropout)."""
  encoder = encoder_config("tiny", vocab_size=VOCAB, relative_position=relative_position,
                           overrides=dict(
      dropout_rate=0.0, attention_dropout_rate=0.0,
      num_layers=4 if objective == "teams" else 2))
  data = PretrainingData(seq_length=SEQ, max_predictions_per_seq=PREDICTIONS,
                         train_batch_size=4, eval_batch_size=4)
  if objective == "bert":
    return BertPretrainingTask(encoder, data, seed=3)
  if objective == "electra":
    return ElectraPretrainingTask(encoder, data, seed=3, generator_width_multiplier=0.5)
  if objective == "teams":
    return TeamsPretrainingTask(encoder, data, seed=3)
  if objective.startswith("electra_hp"):
    return ElectraHpPretrainingTask(encoder, data, seed=3, generator_width_multiplier=0.5,
                                    hardness_method=objective[len("electra_"):])
  half_width_generator = {"electra_15": Electra15PretrainingTask,
                          "replace_mlm": ReplaceMlmPretrainingTask,
                          "all_tokens_mlm": AllTokensMlmPretrainingTask,
                          "adversarial_electra": AdversarialElectraPretrainingTask}
  if objective in half_width_generator:
    return half_width_generator[objective](encoder=encoder, data=data, seed=3,
                                           generator_width_multiplier=0.5)
  if objective == "two_stage_electra":  # the generator's stage at step 0, the switch at 1
    return TwoStageElectraPretrainingTask(encoder=encoder, data=data, seed=3,
                                          generator_width_multiplier=1.0, generator_steps=1)
  assert objective == "script", objective
  return ScriptPretrainingTask(encoder, data, seed=3)


def _finetuning_task(kind, tmp_path):
  """A GLUE (SST-2-like) or tagging (CoNLL-2003 layout, 2 to 7 labelled pieces a sentence:
  micro-batches normalised by their own counts would differ) task, batch 4."""
  if kind == "tagging":
    data = FinetuningData(conll2003_records(tmp_path), train_batch_size=4, eval_batch_size=4)
    return TaggingTask(tiny_encoder(FINETUNING_VOCAB_SIZE), data, seed=1,
                       layerwise_lr_decay=0.5)
  return GlueTask(tiny_encoder(FINETUNING_VOCAB_SIZE),
                  FinetuningData(_sst2_like(tmp_path), train_batch_size=4, eval_batch_size=4),
                  "sst2", seed=1, layerwise_lr_decay=0.5)


def _step_losses(build, jit_compile, steps=STEPS):
  """Each step's outputs (losses, metrics) of a trainer that `build(jit_compile)` makes."""
  tf_keras.utils.set_random_seed(7)
  trainer = build(jit_compile)
  assert trainer.compiles_whole_step == jit_compile
  return [trainer.train(tf.constant(1)) for _ in range(steps)]


def _assert_same_losses(compiled, uncompiled, rtol=RTOL):
  for step, (ours, theirs) in enumerate(zip(compiled, uncompiled)):
    assert set(ours) == set(theirs)
    for name in theirs:
      if name.endswith("loss"):
        np.testing.assert_allclose(ours[name], theirs[name], rtol=rtol,
                                   err_msg=f"step {step}: {name}")
    assert ours["nonfinite_steps"] == theirs["nonfinite_steps"] == 0


# The configs' optimizers: LAMB (fused) for BERT and ELECTRA, AdamW for the others;
# ELECTRA-HP with T5 relative positions, as its paper trains it.
@pytest.mark.parametrize("objective, optimizer, relative_position", [
    ("bert", "lamb", "none"), ("electra", "lamb", "none"), ("teams", "adamw", "none"),
    ("electra_hp_loss", "adamw", "t5"), ("electra_hp_dist", "adamw", "none"),
    ("script", "adamw", "none")])
@pytest.mark.slow
def test_compiled_step_gives_the_uncompiled_losses(objective, optimizer, relative_position):
  gin.bind_parameter("create_optimizer.optimizer", optimizer)
  task = _task(objective, relative_position)
  examples = pretraining_examples(12)

  def build(jit_compile):
    return build_trainer(task, tf.distribute.get_strategy(), examples, learning_rate=3e-3,
                         jit_compile=jit_compile)[0]

  _assert_same_losses(_step_losses(build, True), _step_losses(build, False))


@pytest.mark.parametrize("kind", ["glue", "tagging"])
@pytest.mark.slow
def test_compiled_finetuning_step_with_layerwise_decay_gives_the_uncompiled_losses(tmp_path,
                                                                                  kind):
  task = _finetuning_task(kind, tmp_path)

  def build(jit_compile):
    model = task.build_model()
    optimizer = create_optimizer(100, learning_rate=3e-3, warmup_steps=0)
    batches = iter(task.build_inputs(True))
    return FinetuningTrainer(task, model, optimizer, tf.distribute.get_strategy(),
                             train_dataset=batches, jit_compile=jit_compile)

  compiled, uncompiled = _step_losses(build, True), _step_losses(build, False)
  _assert_same_losses(compiled, uncompiled)
  assert compiled[-1]["accuracy"] == uncompiled[-1]["accuracy"]


@pytest.mark.slow
def test_mixed_float16_compiled_step_scales_the_loss_like_the_uncompiled_one():
  try:
    precision.set_precision_policy("mixed_float16")
    task, examples = _task("bert"), pretraining_examples(12)

    def build(jit_compile):
      return build_trainer(task, tf.distribute.get_strategy(), examples, learning_rate=3e-3,
                           precision_policy="mixed_float16", jit_compile=jit_compile)[0]

    compiled, uncompiled = _step_losses(build, True), _step_losses(build, False)
  finally:
    precision.set_precision_policy("float32")
  # float16 activations: XLA's fusions round differently from TensorFlow's kernels.
  for ours, theirs in zip(compiled, uncompiled):
    np.testing.assert_allclose(ours["total_loss"], theirs["total_loss"], rtol=1e-3)


@pytest.mark.slow
def test_compiled_step_skips_a_nonfinite_step():
  examples = pretraining_examples(12)
  examples["masked_lm_weights"][4:8] = np.nan  # the second batch of 4
  trainer, _ = build_trainer(_task("bert"), tf.distribute.get_strategy(), examples,
                             jit_compile=True)
  assert trainer.compiles_whole_step
  assert trainer.train(tf.constant(1))["nonfinite_steps"] == 0
  weights = [w.numpy() for w in trainer.model.trainable_weights]
  slots = [w.numpy() for w in trainer.optimizer.weights]
  output = trainer.train(tf.constant(1))
  assert output["nonfinite_steps"] == 1
  assert np.isnan(output["total_loss"])  # no step of the loop counted: the mean is NaN
  assert int(trainer.optimizer.iterations.numpy()) == 2  # the skipped step still counts
  assert int(trainer.consecutive_bad_steps.numpy()) == 1
  assert all(np.array_equal(a, w.numpy()) for a, w in zip(weights, trainer.model.trainable_weights))
  assert all(np.array_equal(a, w.numpy()) for a, w in zip(slots[1:], trainer.optimizer.weights[1:]))
  output = trainer.train(tf.constant(1))
  assert output["nonfinite_steps"] == 0 and np.isfinite(output["total_loss"])
  assert int(trainer.consecutive_bad_steps.numpy()) == 0


@pytest.mark.slow
def test_compiled_step_is_one_host_op_beside_the_loop():
  trainer, _ = build_trainer(_task("electra"), tf.distribute.get_strategy(),
                             pretraining_examples(12), jit_compile=True)
  trainer.train(tf.constant(2))
  # Counted in the traced loop's graph, not by a profiler (whose count, with another job on
  # the CPU, came out 0.5 compiled calls a step): bench/throughput.py --count_host_ops
  # measures the host's ops.
  # pylint: disable=protected-access
  loop = trainer._train_loop_fn.get_concrete_function(trainer._train_iter, tf.constant(2))
  per_step = host_ops.loop_body_ops(loop)
  # The compiled step, the batch, and the orbit loop's counter and condition.
  assert per_step == {"StatefulPartitionedCall": 1, "StatefulPartitionedCall[xla]": 1,
                      "IteratorGetNext": 1, "AddV2": 2, "Less": 1, "ReadVariableOp": 1}, per_step


def test_whole_step_compiles_on_one_replica_not_on_two_cpus(two_replica_strategy):
  assert whole_step_compiles(tf.distribute.get_strategy())
  assert whole_step_compiles(tf.distribute.OneDeviceStrategy("/cpu:0"))
  assert not whole_step_compiles(two_replica_strategy)
