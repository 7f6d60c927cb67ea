"""Two-stage ELECTRA (Clark et al., 2020, section 3.2 "Training Algorithms", Figure 3 right):
the generator trained alone, then the discriminator initialised from it and trained alone."""
from typing import List, Tuple

import tensorflow as tf

from modeling.layers.encoder_config import EncoderConfig
from modeling.models.electra import ElectraPretrainer

# Call inputs the two-stage model reads besides ELECTRA's (tasks/two_stage_electra_pretraining.py
# makes them from the step).
LOSS_SWITCHES = "loss_switches"
INITIALISE_DISCRIMINATOR = "initialise_discriminator"


class TwoStageElectraPretrainer(ElectraPretrainer):
  """ELECTRA's pretrainer with a generator as large as the discriminator, which can copy
  the generator's weights into the discriminator.

  "Initialize the weights of the discriminator with the weights of the generator ... the
  weight initialization in this procedure requires having the same size for the generator
  and discriminator" (section 3.2). The copy is of every weight the two do not share: the
  Transformer layers under ELECTRA's tied embeddings (the embedding sub-network and, at
  equal width, the E->H projection are one), and the embeddings too when nothing is shared
  (tasks/two_stage_electra_pretraining.py builds it so, to freeze the whole generator).
  The RTD head has no counterpart in the generator and keeps its own initialisation.

  Args:
    config: the discriminator's (and, here, the generator's) EncoderConfig.
    **kwargs: ElectraPretrainer's, but generator_width_multiplier (always 1).

  Call inputs: ElectraPretrainer's, plus optionally
    `initialise_discriminator` bool [batch]: where any is true (the switch step), the
      generator's weights are copied into the discriminator before it runs;
    `loss_switches` float32 [batch, 2]: (MLM on, RTD on), passed through to the output for
      the task's loss (the same in every row).
  Call output: ElectraPretrainer's, plus `loss_switches` float32 [batch, 2] (ones when the
    input has none).

  Example:

    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> inputs = dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...               input_type_ids=tf.zeros_like(ids),
    ...               masked_lm_positions=tf.constant([[2, 4], [1, 0]]),
    ...               masked_lm_ids=tf.constant([[7, 8], [10, 0]]),
    ...               masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]),
    ...               sampling_seeds=tf.constant([[0, 1], [0, 2]]))
    >>> outputs = TwoStageElectraPretrainer(config)(inputs)
    >>> for name, value in outputs.items():
    ...   print(name, value.dtype.name, value.shape)
    mlm_logits float32 (2, 2, 30)
    sampled_ids int32 (2, 2)
    corrupted_word_ids int32 (2, 8)
    rtd_labels int32 (2, 8)
    rtd_logits float32 (2, 8)
    loss_switches float32 (2, 2)
  """

  def __init__(self, config: EncoderConfig, **kwargs):
    super().__init__(config, generator_width_multiplier=1.0, **kwargs)

  def copied_weight_pairs(self) -> List[Tuple[tf.Variable, tf.Variable]]:
    """(discriminator weight, generator weight) for every weight the two do not share.

    The two encoders are built from one config, so their weights line up in order (shapes
    and the layer-local names must agree).

    Raises:
      ValueError: the encoders' weights do not line up (e.g. another embedding sharing).
    """
    discriminator, generator = self.encoder.weights, self.generator.weights
    if len(discriminator) != len(generator):
      raise ValueError(f"the discriminator has {len(discriminator)} weights, the generator "
                       f"{len(generator)}: two-stage training copies one into the other")
    pairs = []
    for target, source in zip(discriminator, generator):
      if target is source:
        continue
      if target.shape != source.shape or _local_name(target) != _local_name(source):
        raise ValueError(f"cannot initialise discriminator weight {target.name} "
                         f"{target.shape} from generator weight {source.name} {source.shape}")
      pairs.append((target, source))
    return pairs

  def initialise_discriminator_from_generator(self) -> tf.Tensor:
    """Assigns the generator's weights to the discriminator's; returns True (for tf.cond)."""
    for target, source in self.copied_weight_pairs():
      target.assign(source)
    return tf.constant(True)

  def call(self, inputs, training=None):
    if INITIALISE_DISCRIMINATOR in inputs:
      # Before ELECTRA's call reads a discriminator weight: in a tf.function the reads are
      # ordered after these assignments (automatic control dependencies).
      tf.cond(tf.reduce_any(inputs[INITIALISE_DISCRIMINATOR]),
              self.initialise_discriminator_from_generator, lambda: tf.constant(False))
    outputs = super().call(inputs, training=training)
    switches = inputs.get(LOSS_SWITCHES)
    if switches is None:
      switches = tf.ones([tf.shape(inputs["input_word_ids"])[0], 2], tf.float32)
    return dict(outputs, loss_switches=tf.cast(switches, tf.float32))


def _local_name(weight: tf.Variable) -> str:
  """The layer-local part of a weight's name, e.g. "query/kernel:0"."""
  return "/".join(weight.name.split("/")[-2:])
