import numpy as np
import pytest
import tensorflow as tf

from modeling.sampling.replacement_sampling import _SAMPLING_CHUNK
from modeling.sampling.replacement_sampling import _chunk_log_masses
from modeling.sampling.replacement_sampling import categorical_sample
from modeling.sampling.replacement_sampling import example_seeds
from modeling.sampling.replacement_sampling import fold_in_seeds
from modeling.sampling.replacement_sampling import gumbel_noise
from modeling.sampling.replacement_sampling import replace_masked_tokens


def _seeds(count, step=0, stream=0):
  return example_seeds(seed=5, stream=stream, step=tf.constant(step),
                       example_indices=tf.range(count))


# Traced: eagerly, the per-example map over thousands of seeds runs one Python step each.
_traced_sample = tf.function(categorical_sample)


def _frequencies(logits, draws, **kwargs):
  """Frequencies of each id over `draws` examples, each with its own seed, one position."""
  vocab = logits.shape[-1]
  samples = _traced_sample(tf.tile(logits[tf.newaxis, tf.newaxis], [draws, 1, 1]),
                           _seeds(draws), **kwargs).numpy()
  return np.bincount(samples.ravel(), minlength=vocab) / draws


@pytest.mark.parametrize("vocab", [50, 2 * _SAMPLING_CHUNK, 2 * _SAMPLING_CHUNK + 3])
def test_chunk_log_masses_sum_exp_over_each_chunk_and_the_rest(vocab):
  logits = tf.random.stateless_normal([2, vocab], seed=[1, 2])
  row_max = tf.reduce_max(logits, axis=-1, keepdims=True)
  log_masses = _chunk_log_masses(logits, row_max).numpy()
  exp = np.exp(logits.numpy() - row_max.numpy())
  starts = range(0, vocab, _SAMPLING_CHUNK)  # a last partial chunk holds the rest
  expected = np.stack([exp[:, start:start + _SAMPLING_CHUNK].sum(-1) for start in starts], 1)
  np.testing.assert_allclose(log_masses, np.log(expected), rtol=1e-5, atol=1e-6)


def test_draw_is_gumbel_max_over_chunks_then_within_the_chunk():
  # Two chunks + 4 ids. Chunk log masses are log(sum exp(logit - max)); the noise is the
  # example's gumbel_noise over [positions, chunks + 128]: chunk scores first, then ids.
  vocab, chunks = 2 * _SAMPLING_CHUNK + 4, 3
  logits = tf.random.stateless_normal([3, 2, vocab], seed=[7, 8])
  seeds = _seeds(3)
  noise = gumbel_noise(seeds, [2, chunks + _SAMPLING_CHUNK]).numpy()
  rows = logits.numpy()
  padded = np.concatenate([rows, np.full([3, 2, chunks * _SAMPLING_CHUNK - vocab], -np.inf)],
                          axis=-1).reshape([3, 2, chunks, _SAMPLING_CHUNK])
  shifted = padded - rows.max(-1)[..., None, None]
  chunk = np.argmax(np.log(np.exp(shifted).sum(-1)) + noise[..., :chunks], axis=-1)
  chunk_logits = np.take_along_axis(padded, chunk[..., None, None], axis=2)[..., 0, :]
  within = np.argmax(chunk_logits + noise[..., chunks:], axis=-1)
  np.testing.assert_array_equal(categorical_sample(logits, seeds).numpy(),
                                chunk * _SAMPLING_CHUNK + within)


def test_samples_follow_the_softmax_across_chunks():
  # 300 ids (three chunks, the last partial) with the mass on ids in different chunks.
  probs = np.full(300, 1e-9)
  probs[[5, 130, 299]] = [0.5, 0.3, 0.2]
  draws = 4000
  frequencies = _frequencies(tf.math.log(tf.constant(probs, tf.float32)), draws)
  np.testing.assert_allclose(frequencies[[5, 130, 299]], [0.5, 0.3, 0.2],
                             atol=4 * np.sqrt(0.25 / draws))
  assert frequencies.sum() == 1.0


def test_temperature_and_disallowed_ids():
  logits = tf.math.log(tf.constant([0.6, 0.3, 0.1]))
  draws = 4000
  tolerance = 4 * np.sqrt(0.25 / draws)
  # T = 2: softmax(log p / 2) is proportional to sqrt(p).
  tempered = np.sqrt([0.6, 0.3, 0.1]) / np.sqrt([0.6, 0.3, 0.1]).sum()
  np.testing.assert_allclose(_frequencies(logits, draws, temperature=2.0), tempered,
                             atol=tolerance)
  # Disallowing id 0 leaves 0.3 : 0.1.
  samples = _traced_sample(tf.tile(logits[tf.newaxis, tf.newaxis], [draws, 1, 1]),
                           _seeds(draws), disallowed_ids=tf.zeros([draws, 1], tf.int32))
  frequencies = np.bincount(samples.numpy().ravel(), minlength=3) / draws
  assert frequencies[0] == 0.0
  np.testing.assert_allclose(frequencies[1:], [0.75, 0.25], atol=tolerance)
  with pytest.raises(ValueError, match="temperature"):
    categorical_sample(logits[tf.newaxis, tf.newaxis], _seeds(1), temperature=0.0)


def test_a_certain_position_always_draws_its_id():
  logits = tf.constant([[[0.0, 50.0, 0.0, 0.0], [0.0, 0.0, 0.0, -50.0]]])
  logits = tf.concat([logits, tf.fill([1, 2, 400], -80.0)], axis=-1)  # past one chunk
  samples = categorical_sample(tf.tile(logits, [64, 1, 1]), _seeds(64)).numpy()
  assert (samples[:, 0] == 1).all()
  assert set(samples[:, 1]) <= {0, 1, 2}


def test_sample_of_an_example_does_not_depend_on_the_batch_it_is_in():
  logits = tf.random.stateless_normal([4, 3, 300], seed=[3, 4])
  whole = categorical_sample(logits, _seeds(4, step=7))
  second_half = categorical_sample(logits[2:], example_seeds(5, 0, tf.constant(7),
                                                             tf.range(2, 4)))
  np.testing.assert_array_equal(whole[2:].numpy(), second_half.numpy())
  np.testing.assert_array_equal(whole.numpy(), categorical_sample(logits, _seeds(4, step=7)))
  # Another step draws other ids (12 positions over 300 ids: equal by chance ~never).
  assert not np.array_equal(whole.numpy(), categorical_sample(logits, _seeds(4, step=8)))
  assert whole.dtype == tf.int32


def test_noise_of_an_example_does_not_depend_on_the_batch_it_is_in():
  whole = gumbel_noise(example_seeds(1, 0, tf.constant(7), tf.range(4)), [2, 5])
  second_half = gumbel_noise(example_seeds(1, 0, tf.constant(7), tf.range(2, 4)), [2, 5])
  np.testing.assert_array_equal(whole[2:].numpy(), second_half.numpy())
  # Different examples, steps and streams draw different noise.
  assert not np.allclose(whole[0], whole[1])
  other_step = gumbel_noise(example_seeds(1, 0, tf.constant(8), tf.range(4)), [2, 5])
  other_stream = gumbel_noise(example_seeds(1, 1, tf.constant(7), tf.range(4)), [2, 5])
  assert not np.allclose(whole, other_step) and not np.allclose(whole, other_stream)
  assert whole.dtype == tf.float32 and np.isfinite(whole.numpy()).all()


def test_replacements_and_labels_on_a_hand_built_batch():
  mask = 4
  input_word_ids = tf.constant([[1, mask, 11, mask, 13, mask],
                                [1, 20, mask, 22, 0, 0]])
  positions = tf.constant([[1, 3, 5], [2, 0, 0]])  # row 1: one real position, two pads
  weights = tf.constant([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
  original = tf.constant([[10, 12, 14], [21, 0, 0]])
  sampled = tf.constant([[30, 12, 31], [21, 40, 41]])  # 12 and 21 equal the originals
  corrupted, labels = replace_masked_tokens(input_word_ids, positions, weights, original,
                                            sampled)
  assert corrupted.numpy().tolist() == [[1, 30, 11, 12, 13, 31],
                                        [1, 20, 21, 22, 0, 0]]
  # A sample equal to the original is labelled real; padding slots change nothing
  # (position 0 of row 1 keeps its token and its label).
  assert labels.numpy().tolist() == [[0, 1, 0, 0, 0, 1],
                                     [0, 0, 0, 0, 0, 0]]


def test_an_unknown_vocabulary_size_is_a_clear_error():
  traced = tf.function(categorical_sample, input_signature=[
      tf.TensorSpec([None, None, None], tf.float32), tf.TensorSpec([None, 2], tf.int32)])
  with pytest.raises(ValueError, match="static vocabulary size"):
    traced.get_concrete_function()


def test_draws_are_the_same_in_and_out_of_xla():
  # tf.random.stateless_uniform's floats differ under XLA; the Philox bits do not.
  seeds = _seeds(4, step=3)
  logits = tf.random.stateless_normal([4, 3, 300], seed=[5, 6])
  compiled_noise = tf.function(gumbel_noise, jit_compile=True)(seeds, [3, 7])
  np.testing.assert_allclose(compiled_noise.numpy(), gumbel_noise(seeds, [3, 7]).numpy(),
                             rtol=1e-6, atol=1e-6)  # log's last bit may differ
  compiled_sample = tf.function(categorical_sample, jit_compile=True)(logits, seeds)
  np.testing.assert_array_equal(compiled_sample.numpy(),
                                categorical_sample(logits, seeds).numpy())


def test_seeds_are_the_same_in_and_out_of_xla():
  # "auto_select" is Philox in TensorFlow's kernels and another generator under XLA: a step
  # compiled with jit_compile drew other TEAMS negatives and SCRIPT relaxations than the
  # uncompiled one until both ops named Philox.
  def seeds_and_folded(step):
    seeds = example_seeds(11, 0, step, tf.range(5))
    return seeds, fold_in_seeds(seeds, 3)

  eager = seeds_and_folded(tf.constant(4))
  compiled = tf.function(seeds_and_folded, jit_compile=True)(tf.constant(4))
  for ours, theirs in zip(compiled, eager):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
  assert len(set(map(tuple, eager[1].numpy().tolist()))) == 5  # one seed per example
  assert not np.array_equal(eager[0].numpy(), eager[1].numpy())

