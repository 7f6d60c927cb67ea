"""flop_count: the analytic FLOPs terms, hand-counted on the tiny encoder."""
import pytest

from modeling import flop_count
from modeling.layers.encoder_config import encoder_config

TINY = encoder_config("tiny", vocab_size=50)  # E16 H32 A2 FFN64 L2, 2 types
SEQ = 8


def _forward(terms, kind=None):
  return sum(term.forward for term in terms if kind in (None, term.kind))


def _backward(terms):
  return sum(term.backward for term in terms)


def test_the_basic_terms_count_as_the_paper_does():
  matmul = flop_count.matmul("m", 3, 4, 5)
  assert (matmul.kind, matmul.forward, matmul.backward) == (flop_count.MATMUL, 120, 240)
  assert flop_count.matmul("m", 3, 4, 5, differentiable_operands=1).backward == 120
  lookup = flop_count.lookup("l", tokens=8, table_rows=50, width=16)
  assert (lookup.kind, lookup.forward, lookup.backward) == (flop_count.LOOKUP, 12800, 12800)
  assert flop_count.elementwise("e", 10, 5).backward == 100
  assert flop_count.elementwise("e", 10, 5, trained=False).backward == 0
  dense = flop_count.dense("d", 2, 3, 4)
  assert [term.name for term in dense] == ["d", "d/bias"]
  assert _forward(dense) == 2 * 2 * 3 * 4 + 2 * 4


def test_embedding_terms_of_the_tiny_encoder():
  terms = flop_count.embedding_terms(TINY, SEQ, "enc")
  # word and position lookups, the one-hot type matmul, sum, LayerNorm, dropout, E->H.
  assert _forward(terms, flop_count.LOOKUP) == 2 * 8 * 50 * 16 + 2 * 8 * 8 * 16
  assert _forward(terms, flop_count.MATMUL) == 2 * 8 * 2 * 16 + 2 * 8 * 16 * 32
  assert _forward(terms, flop_count.ELEMENTWISE) == 8 * 16 * (2 + 5 + 4) + 8 * 32
  assert _forward(terms) == 25216
  # Lookups and the type matmul: the table's gradient only; the rest twice.
  assert _backward(terms) == 14848 + 512 + 2 * (1664 + 8192)
  # No projection when E = H.
  square = TINY.replace(embedding_size=32)
  assert not any("projection" in term.name
                 for term in flop_count.embedding_terms(square, SEQ, "enc"))


def test_a_transformer_layers_matmuls_are_2t_4h2_2th_2hi():
  terms = flop_count.transformer_layer_terms(TINY, SEQ, "layer")
  hidden, inner, tokens = 32, 64, SEQ
  assert _forward(terms, flop_count.MATMUL) == 2 * tokens * (
      4 * hidden * hidden + 2 * tokens * hidden + 2 * hidden * inner)
  assert all(term.name.startswith("layer/") for term in terms)
  assert _backward(terms) == 2 * _forward(terms)


def test_relative_position_adds_one_bias_per_attention_logit():
  plain = flop_count.transformer_layer_terms(TINY, SEQ, "layer")
  relative = flop_count.transformer_layer_terms(TINY.replace(relative_position="t5"), SEQ,
                                                "layer")
  (bias,) = [term for term in relative if term.name == "layer/relative_position_bias"]
  assert (bias.forward, bias.backward) == (2 * SEQ * SEQ, 2 * SEQ * SEQ)
  assert _forward(relative) == _forward(plain) + bias.forward


def test_an_encoder_is_its_embeddings_and_each_layer():
  terms = flop_count.encoder_terms(TINY, SEQ, "enc")
  assert _forward(terms) == _forward(flop_count.embedding_terms(TINY, SEQ, "enc")) + 2 * (
      _forward(flop_count.transformer_layer_terms(TINY, SEQ, "x")))
  assert {term.name.split("/")[1] for term in terms
          if term.name.startswith("enc/layer_")} == {"layer_0", "layer_1"}


def test_heads_losses_and_sampling():
  head = flop_count.masked_lm_head_terms(32, TINY, positions=3, name="h")
  # transform (dense H->E, GELU, LayerNorm) and the logits over the vocabulary.
  assert _forward(head) == (2 * 3 * 32 * 16 + 3 * 16) + 3 * 16 * (8 + 5) + (
      2 * 3 * 16 * 50 + 3 * 50)
  rtd = flop_count.rtd_head_terms(32, SEQ, "r")
  assert _forward(rtd) == (2 * 8 * 32 * 32 + 8 * 32) + 8 * 32 * 8 + 2 * 8 * 32
  loss = flop_count.mlm_loss(3, 50)
  assert (loss.forward, loss.backward) == (3 * 50 * 5, 2 * 3 * 50 * 5)
  draw = flop_count.categorical_sampling("s", 3, 50)
  assert (draw.forward, draw.backward) == (3 * 50 * 5, 0)


def test_a_term_is_frozen():
  with pytest.raises(AttributeError):
    flop_count.matmul("m", 1, 1, 1).forward = 0
