"""ELECTRA's generator training variants (issue #35; paper Figure 3 right, appendix F).

Two-stage: through the runner's trainer, which weights each stage updates, the copy at the
switch step, and exact resume from a checkpoint before the switch. Adversarial: which weights
each loss reaches (the REINFORCE surrogate and the baseline's cross-entropy on hand-checked
numbers: tests/modeling/losses/test_policy_gradient.py). Training, restore and export of
both: the conformance suite (tests/tasks/test_objective_conformance.py).
"""
import numpy as np
import pytest
import tensorflow as tf

from data.user_error import UserError
from tasks.adversarial_electra_pretraining import AdversarialElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tasks.two_stage_electra_pretraining import TwoStageElectraPretrainingTask
from tests.kit import pretraining as helpers
from tests.kit import trainers
from tests.kit.gradients import groups_reached
from tests.kit.gradients import variable_ids
from tests.kit.gradients import weights_without
from training.checkpoints import training_checkpoint
from training.trainer import current_learning_rate

SWITCH = 2  # generator_steps: steps 0 and 1 train the generator, step 2 switches


def _data():
  return PretrainingData(seq_length=helpers.SEQ, max_predictions_per_seq=helpers.PREDICTIONS,
                         train_batch_size=4, eval_batch_size=4)


def _two_stage_task(**kwargs):
  return TwoStageElectraPretrainingTask(
      encoder=helpers.tiny_encoder(helpers.VOCAB), data=_data(),
      **dict(dict(generator_steps=SWITCH, generator_width_multiplier=1.0), **kwargs))


def _values(variables):
  return [v.numpy().copy() for v in variables]


def _parts(model):
  """name -> variables: every weight each network reads (the generator: its encoder and MLM
  head, tied table included; the discriminator: its encoder and RTD head)."""
  generator = model.generator.weights
  return dict(
      generator=generator + weights_without(model.generator_mlm_head, variable_ids(generator)),
      discriminator=model.encoder.weights + model.rtd_head.weights)


def _changed(before, after):
  return any(not np.array_equal(b, a) for b, a in zip(before, after))


@pytest.fixture(scope="module")
def two_stage_run(tmp_path_factory):
  """Steps 0..3 of a tiny two-stage run (switch at 2) through the runner's trainer, with
  each part's weights before each step; then a fresh trainer resumed from the checkpoint
  taken after step 0, trained to the same step."""
  task = _two_stage_task()
  examples = helpers.pretraining_examples(4)  # one batch of 4: every step reads the same
  strategy = tf.distribute.get_strategy()
  trainer, _ = trainers.pretraining_trainer(task, strategy, examples, learning_rate=1e-3)
  snapshots = []
  prefix = None
  for step in range(4):
    snapshots.append({name: _values(variables)
                      for name, variables in _parts(trainer.model).items()})
    if step == 1:
      prefix = training_checkpoint(trainer.model, trainer.optimizer).save(
          str(tmp_path_factory.mktemp("two_stage") / "ckpt"))
    trainer.train(tf.constant(1))
  snapshots.append({name: _values(variables)
                    for name, variables in _parts(trainer.model).items()})
  resumed, _ = trainers.pretraining_trainer(task, strategy, examples, learning_rate=1e-3)
  training_checkpoint(resumed.model, resumed.optimizer).read(
      prefix).assert_existing_objects_matched()
  assert int(resumed.optimizer.iterations.numpy()) == 1
  for _ in range(3):
    resumed.train(tf.constant(1))
  return trainer, snapshots, resumed


@pytest.mark.slow
def test_two_stage_generator_stage_leaves_the_discriminator_untouched(two_stage_run):
  _, snapshots, _ = two_stage_run
  for step in range(SWITCH):  # Adam's decoupled weight decay would move it: it is not run
    before, after = snapshots[step], snapshots[step + 1]
    assert not _changed(before["discriminator"], after["discriminator"]), step
    assert _changed(before["generator"], after["generator"]), step


@pytest.mark.slow
def test_two_stage_switch_starts_the_discriminator_from_the_generator(two_stage_run):
  trainer, snapshots, _ = two_stage_run
  pairs = trainer.model.copied_weight_pairs()
  parts = _parts(trainer.model)
  # Untied at the switch: every discriminator encoder weight (embeddings, E->H projection
  # and layers) is its own copy of the generator's; the two share no variable.
  assert len(pairs) == len(trainer.model.encoder.weights) > len(
      trainer.model.encoder.transformer_layers) * 16
  assert not variable_ids(parts["generator"]) & variable_ids(parts["discriminator"])
  own = {id(target): index for index, target in enumerate(parts["discriminator"])}
  sources = {id(source): index for index, source in enumerate(parts["generator"])}
  before, after = snapshots[SWITCH], snapshots[SWITCH + 1]
  far, near = 0.0, 0.0
  for target, source in pairs:
    generator_value = before["generator"][sources[id(source)]]
    far = max(far, np.abs(before["discriminator"][own[id(target)]] - generator_value).max())
    near = max(near, np.abs(after["discriminator"][own[id(target)]] - generator_value).max())
  # Independently initialised before; after, one Adam step (of size ~lr) from the copy.
  assert near < 3e-3 < 1e-2 < far, (near, far)
  # From the switch on, the discriminator trains.
  for step in range(SWITCH, 4):
    assert _changed(snapshots[step]["discriminator"], snapshots[step + 1]["discriminator"])


@pytest.mark.slow
def test_two_stage_changes_no_generator_variable_in_stage_two(two_stage_run):
  """The paper's "keeping the generator's weights frozen": every variable the generator
  reads (embeddings and E->H projection included), bitwise, over the stage-2 steps."""
  trainer, snapshots, _ = two_stage_run
  names = [v.name for v in _parts(trainer.model)["generator"]]
  assert any("embedding" in name for name in names) and len(names) == len(set(names))
  for step in range(SWITCH, 4):
    for name, before, after in zip(names, snapshots[step]["generator"],
                                   snapshots[step + 1]["generator"]):
      np.testing.assert_array_equal(before, after, err_msg=f"{name} at step {step}")


def test_two_stage_copies_only_at_the_switch_step():
  task = _two_stage_task()
  model = task.build_model()
  batch = {k: tf.constant(v) for k, v in helpers.pretraining_examples(4).items()}
  for step in (SWITCH - 1, SWITCH + 1, SWITCH):
    outputs = model(task.model_inputs(batch, tf.constant(step, tf.int64), training=True))
    copied = all(np.array_equal(target.numpy(), source.numpy())
                 for target, source in model.copied_weight_pairs())
    assert copied == (step == SWITCH), step
    np.testing.assert_array_equal(outputs["loss_switches"][0],
                                  [1.0, 0.0] if step < SWITCH else [0.0, 1.0])
  # Evaluation has no stage: both losses, no copy.
  outputs = model(task.model_inputs(batch, tf.constant(SWITCH, tf.int64), training=False))
  np.testing.assert_array_equal(outputs["loss_switches"][0], [1.0, 1.0])


@pytest.mark.slow
def test_two_stage_resumes_exactly_from_a_checkpoint_before_the_switch(two_stage_run):
  trainer, _, resumed = two_stage_run
  assert int(resumed.optimizer.iterations.numpy()) == 4
  for weight, expected in zip(resumed.model.weights, trainer.model.weights):
    np.testing.assert_array_equal(weight.numpy(), expected.numpy(), err_msg=weight.name)


def test_two_stage_switch_warmup_ramps_the_discriminator_stage_learning_rate():
  task = _two_stage_task(switch_warmup_steps=4)
  scale = [float(task.switch_warmup(tf.constant(step, tf.int64))) for step in range(8)]
  assert scale == [1.0, 1.0, 0.25, 0.5, 0.75, 1.0, 1.0, 1.0]  # SWITCH = 2
  assert _two_stage_task().training_phases(_two_stage_task().build_model()) \
      .learning_rate_scale is None
  # The trainer's optimizer steps with the schedule times the ramp (what it logs, too).
  trainer, _ = trainers.pretraining_trainer(task, tf.distribute.get_strategy(),
                                            helpers.pretraining_examples(4),
                                            learning_rate=1e-3, total_steps=1000)
  plain, _ = trainers.pretraining_trainer(_two_stage_task(), tf.distribute.get_strategy(),
                                          helpers.pretraining_examples(4),
                                          learning_rate=1e-3, total_steps=1000)
  for step, factor in ((1, 1.0), (SWITCH, 0.25), (SWITCH + 2, 0.75), (SWITCH + 5, 1.0)):
    trainer.optimizer.iterations.assign(step)
    plain.optimizer.iterations.assign(step)
    np.testing.assert_allclose(
        float(trainer.optimizer._decayed_lr(tf.float32)),  # pylint: disable=protected-access
        factor * float(plain.optimizer._decayed_lr(tf.float32)), rtol=1e-6)
    np.testing.assert_allclose(float(current_learning_rate(trainer.optimizer)),
                               factor * float(current_learning_rate(plain.optimizer)),
                               rtol=1e-6)
  with pytest.raises(UserError, match="switch_warmup_steps must be >= 0"):
    _two_stage_task(switch_warmup_steps=-1)


def test_two_stage_needs_a_generator_as_large_as_the_discriminator():
  with pytest.raises(UserError, match="ElectraPretrainingTask.generator_width_multiplier"):
    _two_stage_task(generator_width_multiplier=0.25)
  for sharing in ("gdes", "all"):
    with pytest.raises(UserError, match="ElectraPretrainingTask.weight_sharing must be one of"):
      _two_stage_task(weight_sharing=sharing)


# ------------------------------------------------------------------------ adversarial
def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x))


def _adversarial_run():
  task = AdversarialElectraPretrainingTask(
      encoder=helpers.tiny_encoder(helpers.VOCAB), data=_data(), generator_width_multiplier=0.5,
      mlm_weight=0.0)
  return (task,) + helpers.step_under_tape(task)


def test_adversarial_losses_reach_what_appendix_f_trains():
  task, model, batch, tape, outputs, result = _adversarial_run()
  shared = variable_ids(model.encoder.embedding_network.trainable_weights)
  groups = dict(
      embeddings=model.encoder.embedding_network.trainable_weights,
      generator=weights_without(model.generator, shared) +
      weights_without(model.generator_mlm_head, shared),
      discriminator=weights_without(model.encoder, shared) + model.rtd_head.trainable_weights,
      baseline=model.baseline_head.trainable_weights)
  losses = result.losses
  assert groups_reached(tape, losses["reinforce_loss"], groups) == {"generator", "embeddings"}
  assert groups_reached(tape, losses["baseline_loss"], groups) == {"baseline"}
  # The discriminator's loss reaches the generator only through the tied embeddings (as in
  # ELECTRA): nothing through the discrete samples.
  assert groups_reached(tape, losses["disc_loss"], groups) == {"discriminator", "embeddings"}
  np.testing.assert_allclose(
      result.total_loss, 50 * losses["disc_loss"] + losses["reinforce_loss"] +
      losses["baseline_loss"], rtol=1e-6)
  assert set(result.metric_updates) == set(task.build_metrics())
  # The reward metric is the discriminator's log-likelihood at the real masked positions.
  positions = batch["masked_lm_positions"].numpy()
  logit = np.take_along_axis(outputs["rtd_logits"].numpy(), positions, axis=1)
  label = np.take_along_axis(outputs["rtd_labels"].numpy(), positions, axis=1)
  expected = np.where(label == 1, np.log(_sigmoid(logit)), np.log(_sigmoid(-logit)))
  np.testing.assert_allclose(result.metric_updates["generator_reward"]["values"], expected,
                             rtol=1e-5, atol=1e-6)
