import numpy as np
import tensorflow as tf

from modeling.layers.encoder_config import encoder_config
from modeling.models.electric import ElectricPretrainer

VOCAB = 30
# [CLS] 7 8 9 10 [SEP] 11 12 [SEP] [PAD]; positions 2 and 7 chosen, shown as [MASK] (4).
MASKED_IDS = [[2, 7, 4, 9, 10, 3, 11, 4, 3, 0]]
TYPE_IDS = [[0, 0, 0, 0, 0, 0, 1, 1, 1, 0]]


def _inputs(masked_ids=None, seeds=(1, 2)):
  ids = tf.constant(masked_ids or MASKED_IDS, tf.int32)
  return dict(input_word_ids=ids, input_mask=tf.cast(ids > 0, tf.int32),
              input_type_ids=tf.constant(TYPE_IDS, tf.int32),
              masked_lm_positions=tf.constant([[2, 7]], tf.int32),
              masked_lm_ids=tf.constant([[8, 12]], tf.int32),
              masked_lm_weights=tf.constant([[1.0, 1.0]]),
              sampling_seeds=tf.constant([list(seeds)], tf.int32))


def _model():
  return ElectricPretrainer(encoder_config("tiny", vocab_size=VOCAB),
                            generator_width_multiplier=0.5, name="electric")


def test_the_generator_reads_the_unmasked_sentence_and_noise_goes_to_the_chosen_positions():
  model = _model()
  outputs = model(_inputs())
  np.testing.assert_array_equal(outputs["original_word_ids"].numpy(),
                                [[2, 7, 8, 9, 10, 3, 11, 12, 3, 0]])
  corrupted = outputs["corrupted_word_ids"].numpy()[0]
  np.testing.assert_array_equal(corrupted[[2, 7]], outputs["sampled_ids"].numpy()[0])
  np.testing.assert_array_equal(np.delete(corrupted, [2, 7]), [2, 7, 9, 10, 3, 11, 3, 0])
  np.testing.assert_array_equal(outputs["rtd_labels"].numpy(), [[0, 0, 1, 0, 0, 0, 0, 1, 0, 0]])
  np.testing.assert_array_equal(outputs["cloze_weights"].numpy(),
                                [[0, 1, 1, 1, 1, 0, 1, 1, 0, 0]])
  # The [MASK]s in the input change nothing: the generator unmasks first.
  unmasked = model(_inputs([[2, 7, 8, 9, 10, 3, 11, 12, 3, 0]]))
  np.testing.assert_array_equal(unmasked["cloze_logits"].numpy(),
                                outputs["cloze_logits"].numpy())


def test_a_draw_equal_to_the_original_is_still_labelled_noise():
  model = _model()
  model(_inputs())
  bias = np.full([VOCAB], -1e4, np.float32)
  bias[12] = 1e4  # q puts all its mass on 12, position 7's original
  model.cloze_head.output_bias.assign(bias)
  outputs = model(_inputs())
  np.testing.assert_array_equal(outputs["sampled_ids"].numpy(), [[12, 12]])
  np.testing.assert_array_equal(outputs["rtd_labels"].numpy(), [[0, 0, 1, 0, 0, 0, 0, 1, 0, 0]])


def test_q_at_t_does_not_change_with_x_t_and_changes_elsewhere():
  model = _model()
  original = [[2, 7, 8, 9, 10, 3, 11, 12, 3, 0]]
  before = model.cloze_logits(_inputs(original)).numpy()
  changed = [row[:] for row in original]
  changed[0][3] = 20
  after = model.cloze_logits(_inputs(changed)).numpy()
  np.testing.assert_allclose(after[0, 3], before[0, 3], atol=1e-5)
  for other in [1, 2, 4, 6, 7]:
    assert np.abs(after[0, other] - before[0, other]).max() > 1e-4, other


def test_no_gradient_of_the_discriminator_loss_reaches_the_generator():
  model = _model()
  inputs = _inputs()
  model(inputs)
  with tf.GradientTape(persistent=True) as tape:
    outputs = model(inputs, training=True)
    disc_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
        labels=tf.cast(outputs["rtd_labels"], tf.float32), logits=outputs["rtd_logits"]))
  generator = (model.cloze_generator.left_to_right.transformer_layers +
               model.cloze_generator.right_to_left.transformer_layers +
               [model.cloze_head])
  shared = {id(v) for v in model.encoder.embedding_network.trainable_variables}
  # The embedding sub-network is shared, as ELECTRA's: the generator's own weights are
  # the towers' layers and the cloze head's transform and bias.
  generator_variables = [v for layer in generator for v in layer.trainable_variables
                         if id(v) not in shared]
  assert len(generator_variables) > 20
  gradients = tape.gradient(disc_loss, generator_variables)
  assert all(g is None for g in gradients), [v.name for v, g in
                                             zip(generator_variables, gradients) if g is not None]
  # ... while the discriminator and its energy head get one.
  assert tape.gradient(disc_loss, model.rtd_head.trainable_variables[0]) is not None


def test_score_is_minus_the_energies_summed_over_the_sentence_tokens():
  model = _model()
  inputs = _inputs([[2, 7, 8, 9, 10, 3, 11, 12, 3, 0]])
  model(inputs)
  energies = model.energies(inputs, training=False).numpy()[0]
  expected = -energies[[1, 2, 3, 4, 6, 7]].sum()
  np.testing.assert_allclose(model.score(inputs).numpy(), [expected], rtol=1e-5)


def test_only_the_discriminator_is_exported_to_transformers():
  model = _model()
  parts = model.exported_parts()
  assert [(part.name, part.architecture) for part in parts] == [
      ("discriminator", "ElectraForPreTraining")]
  assert parts[0].encoder is model.encoder and parts[0].head is model.rtd_head
  (name, reason), = model.parts_without_transformers_class()
  assert name == "generator" and "no transformers class" in reason
