"""Two-stage ELECTRA (Clark et al., 2020, section 3.2 "Training Algorithms", Figure 3 right).

  1. Train only the generator with L_MLM for n steps.
  2. Initialize the weights of the discriminator with the weights of the generator. Then
     train the discriminator with L_Disc for n steps, keeping the generator's weights
     frozen.

Frozen means every weight the generator reads: the two are untied at the switch, the
discriminator getting its own embedding sub-network and E->H projection, initialised from
the generator's with its Transformer layers (issue #52).
"""
from typing import Dict

import gin
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from modeling.layers.weight_sharing import EMBEDDINGS
from modeling.layers.weight_sharing import NONE
from modeling.models.two_stage_electra import INITIALISE_DISCRIMINATOR
from modeling.models.two_stage_electra import LOSS_SWITCHES
from modeling.models.two_stage_electra import TwoStageElectraPretrainer
from tasks.electra_pretraining import electra_flop_terms
from tasks.electra_pretraining import ELECTRA_MASKING
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.protocol import StepResult
from tasks.protocol import TrainingPhases
from tasks.registry import register

GENERATOR_PHASE, DISCRIMINATOR_PHASE = 0, 1
# The sharing under which the generator has Transformer layers of its own (embeddings shared
# or not), as the copy into the discriminator needs: not GDES's or "all"'s.
_OWN_TRANSFORMERS = (EMBEDDINGS, NONE)


@gin.configurable
class TwoStageElectraPretrainingTask(ElectraPretrainingTask):
  """ELECTRA trained in two stages: steps [0, generator_steps) train the generator with
  mlm_weight * MLM; at step generator_steps the discriminator is initialised from the
  generator; later steps train the discriminator with rtd_weight * RTD, the generator
  frozen.

  The switch happens inside the training step, from the step counter: the model copies the
  weights (`TwoStageElectraPretrainer`, a tf.cond on `step == generator_steps`, so once), and
  the trainer updates only the stage's variables (`training_phases`: a frozen part keeps its
  values and optimizer slots, which a zero gradient would not under Adam or weight decay). A
  checkpoint resumes exactly across the switch: the copy is of the weights the checkpoint
  holds, at the step its counter says.

  Which weights each stage trains: the generator stage every weight the generator reads
  (its embedding sub-network and E->H projection, Transformer layers and MLM head); the
  discriminator stage every weight the discriminator reads (its own copies of all of those
  but the MLM head, and its RTD head). No weight is in both, so no generator weight moves in
  stage 2, as the paper's "keeping the generator's weights frozen" says. ELECTRA's tied
  embeddings (weight_sharing = 'embeddings') hold in stage 1 and are untied at the switch:
  the model is built with embeddings of its own for each network (as weight_sharing =
  'none'), and the discriminator's, which no stage-1 loss reaches (the RTD loss is
  multiplied by 0 there, and they are not trained), are overwritten with the generator's at
  the switch. That is the same stage 1 as one tied table: the generator's MLM trains the
  embeddings alone either way. Only the discriminator's stage-1 disc_loss (which trains
  nothing) reads its own initial embeddings rather than the generator's.

  Both networks run at every step (the other stage's loss is multiplied by 0): a step costs
  ELECTRA's FLOPs at generator width 1, in either stage.

  The paper does not say how the discriminator's training starts. The run's one schedule
  goes on through the switch, and the discriminator's optimizer slots start at zero there,
  so its first updates are several times the scheduled size (training/phase_learning_rate.py);
  `switch_warmup_steps` > 0 ramps the learning rate linearly from the switch over that many
  steps (times the schedule), as a fresh run's warm-up would.

  Args:
    generator_steps: n, the generator stage's length (the run's TrainerConfig.train_steps
      minus it is the discriminator stage's: the paper's "n steps" each is half the run).
    switch_warmup_steps: the discriminator stage's own linear warm-up: at step
      generator_steps + k the learning rate is the schedule's times min(1, (k + 1) /
      switch_warmup_steps); 0 (the default): none.
    **kwargs: ElectraPretrainingTask's (its gin bindings apply); generator_width_multiplier
      must be 1, and generator and discriminator must share their embeddings (ELECTRA's
      tying, until the switch) or nothing (`weight_sharing = 'none'`): both build the same
      model, whose networks have embeddings of their own, copied at the switch.

  Metrics and losses: ELECTRA's (masked_lm_loss and disc_loss are reported in both stages;
  total_loss is the stage's: mlm_weight * MLM, then rtd_weight * RTD; in evaluation, which
  has no stage, ELECTRA's joint total).

  Example:

    >>> from modeling.layers.encoder_config import EncoderConfig
    >>> from tasks.pretraining_task import PretrainingData
    >>> config = EncoderConfig(vocab_size=30, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)
    >>> data = PretrainingData(seq_length=8, max_predictions_per_seq=2)
    >>> task = TwoStageElectraPretrainingTask(
    ...     encoder=config, data=data, generator_steps=1, generator_width_multiplier=1.0)
    >>> ids = tf.constant([[2, 9, 4, 11, 4, 3, 0, 0], [2, 4, 12, 3, 0, 0, 0, 0]])  # 4: [MASK]
    >>> batch = dict(input_word_ids=ids, input_mask=tf.sign(ids),
    ...              input_type_ids=tf.zeros_like(ids),
    ...              masked_lm_positions=tf.constant([[2, 4], [1, 0]]),
    ...              masked_lm_ids=tf.constant([[7, 8], [10, 0]]),
    ...              masked_lm_weights=tf.constant([[1.0, 1.0], [1.0, 0.0]]))
    >>> model = task.build_model()
    >>> outputs = model(task.model_inputs(batch, tf.constant(0), training=True), training=True)
    >>> result = task.compute_losses(batch, outputs)
    >>> {name: bool(tf.math.is_finite(loss)) for name, loss in result.losses.items()}
    {'total_loss': True, 'masked_lm_loss': True, 'disc_loss': True}
    >>> # Step 0 is in the generator's stage: the total is its MLM loss alone.
    >>> bool(result.losses["total_loss"] == result.losses["masked_lm_loss"])
    True
  """

  def __init__(self, generator_steps: int = gin.REQUIRED, switch_warmup_steps: int = 0,
               **kwargs):
    super().__init__(**kwargs)
    if self.generator_width_multiplier != 1.0:
      raise UserError(
          "two-stage ELECTRA initialises the discriminator from the generator, so they must "
          "be the same size: set ElectraPretrainingTask.generator_width_multiplier = 1.0 "
          f"(got {self.generator_width_multiplier})")
    if self.weight_sharing not in _OWN_TRANSFORMERS:
      raise UserError(
          "two-stage ELECTRA copies the generator's weights into the discriminator's, which "
          f"needs generator and discriminator Transformers of their own: "
          f"ElectraPretrainingTask.weight_sharing must be one of "
          f"{_OWN_TRANSFORMERS}, got {self.weight_sharing!r}")
    if generator_steps < 0:
      raise UserError(f"TwoStageElectraPretrainingTask.generator_steps must be >= 0, got "
                      f"{generator_steps}")
    if switch_warmup_steps < 0:
      raise UserError(f"TwoStageElectraPretrainingTask.switch_warmup_steps must be >= 0, got "
                      f"{switch_warmup_steps}")
    self.generator_steps = generator_steps
    self.switch_warmup_steps = switch_warmup_steps

  def build_model(self) -> tf_keras.Model:
    # Untied from the start: the tied stage 1 of weight_sharing = 'embeddings' is the same
    # computation (see the class docstring), and stage 2 needs the discriminator's own copy.
    return TwoStageElectraPretrainer(
        self.encoder_config, sampling_temperature=self.sampling_temperature,
        disallow_correct=self.disallow_correct, name="electra_pretrainer",
        weight_sharing=NONE)

  def in_generator_stage(self, step) -> tf.Tensor:
    """bool scalar: `step` (the global step before its update) trains the generator."""
    return tf.cast(step, tf.int64) < self.generator_steps

  def model_inputs(self, batch, step, training):
    inputs = super().model_inputs(batch, step, training)
    batch_size = tf.shape(batch["input_word_ids"])[0]
    if training:
      generator_stage = tf.cast(self.in_generator_stage(step), tf.float32)
      switches = tf.stack([generator_stage, 1.0 - generator_stage])
      switch_now = tf.equal(tf.cast(step, tf.int64), self.generator_steps)
    else:  # evaluation (its step is a batch number): both losses, no copy
      switches, switch_now = tf.ones([2]), tf.constant(False)
    return dict(inputs, **{LOSS_SWITCHES: tf.tile(switches[tf.newaxis], [batch_size, 1]),
                           INITIALISE_DISCRIMINATOR: tf.fill([batch_size], switch_now)})

  def compute_losses(self, batch, outputs) -> StepResult:
    electra = super().compute_losses(batch, outputs)
    mlm_on, rtd_on = tf.unstack(tf.reduce_mean(outputs[LOSS_SWITCHES], axis=0))
    total_loss = (mlm_on * self.mlm_weight * electra.losses["masked_lm_loss"] +
                  rtd_on * self.rtd_weight * electra.losses["disc_loss"])
    return StepResult(total_loss=total_loss,
                      losses=dict(electra.losses, total_loss=total_loss),
                      metric_updates=electra.metric_updates)

  def training_phases(self, model: TwoStageElectraPretrainer) -> TrainingPhases:
    """Generator stage: generator + MLM head; discriminator stage: discriminator + RTD head
    (each with its own embedding sub-network: no variable is in both)."""
    generator = model.generator.trainable_variables + _own(model.generator_mlm_head,
                                                           model.generator)
    discriminator = model.encoder.trainable_variables + model.rtd_head.trainable_variables
    return TrainingPhases(
        phase_of_step=lambda step: tf.where(self.in_generator_stage(step), GENERATOR_PHASE,
                                            DISCRIMINATOR_PHASE),
        variables=[generator, discriminator],
        learning_rate_scale=self.switch_warmup if self.switch_warmup_steps else None)

  def switch_warmup(self, step) -> tf.Tensor:
    """float32 scalar: 1 in the generator stage, then min(1, (k + 1) / switch_warmup_steps)
    at the discriminator stage's k-th step (k = step - generator_steps)."""
    steps_since_switch = tf.cast(step, tf.float32) - float(self.generator_steps)
    ramp = tf.minimum(1.0, (steps_since_switch + 1.0) / float(self.switch_warmup_steps))
    return tf.where(steps_since_switch < 0, 1.0, ramp)


def _own(layer, other):
  """`layer`'s trainable variables that `other` does not hold (a tied head's table)."""
  held = {id(v) for v in other.trainable_variables}
  return [v for v in layer.trainable_variables if id(v) not in held]


# Both networks run every step (module docstring): ELECTRA's FLOPs, at generator width 1.
register("two_stage_electra", TwoStageElectraPretrainingTask, flop_terms=electra_flop_terms,
         masking=ELECTRA_MASKING)
