"""Gradient accumulation: N micro-batches make the whole batch's update, every objective.

One update from a batch of 4 against the same batch as micro-batches of one example (on
2 replicas: 2 micro-batches of one per replica). The examples alternate 16 and 12 real
tokens, 3 and 2 masked positions, so micro-batches normalised by their own counts would
give another update. AdamW's epsilon is 1 so the first update follows the gradient's size
(with 1e-6 it is nearly its sign); clipping to norm 1 is on. Dropout is 0 (tf_keras draws
its masks per call from a stateful generator).
"""
import gin
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from data.user_error import UserError
from tests.kit.pretraining import pretraining_examples
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import pretraining_trainer
from tests.training.test_compiled_step import _finetuning_task
from tests.training.test_compiled_step import _task
from training import precision
from training.gradient_accumulation import whole_batch_denominators

OBJECTIVES = ("bert", "electra", "teams", "electra_hp_loss", "electra_hp_dist", "script")
ATOL = 1e-5


def _first_batch(trainer):
  """The trainer's next training batch (per replica under a distribution strategy)."""
  return next(trainer.train_dataset)


def _one_update(trainer, batch, steps):
  """(weights, losses) after one eager training step of `steps` micro-batches; the
  trainer's weights and optimizer state are put back as they were."""
  variables = trainer.model.trainable_weights + trainer.optimizer.weights
  before = [v.numpy() for v in variables]
  trainer.gradient_accumulation_steps = steps
  losses, _ = trainer.strategy.run(trainer._replica_train_step, args=(batch,))  # pylint: disable=protected-access
  losses = {name: float(trainer.strategy.experimental_local_results(value)[0])
            for name, value in losses.items()}
  after = [w.numpy() for w in trainer.model.trainable_weights]
  assert int(trainer.optimizer.iterations.numpy()) == 1
  for variable, value in zip(variables, before):
    variable.assign(value)
  return after, losses


def _assert_same_update(trainer, steps, atol=ATOL, rtol=1e-5):
  """One update of the trainer's first batch whole and as `steps` micro-batches agree."""
  before = [w.numpy() for w in trainer.model.trainable_weights]
  batch = _first_batch(trainer)
  whole, whole_losses = _one_update(trainer, batch, 1)
  assert max(np.abs(a - b).max() for a, b in zip(whole, before)) > 1e-3  # it shows
  micro, micro_losses = _one_update(trainer, batch, steps)
  for index, (a, b) in enumerate(zip(whole, micro)):
    np.testing.assert_allclose(b, a, atol=atol, err_msg=f"weight {index}")
  assert set(micro_losses) == set(whole_losses)
  for name, value in whole_losses.items():
    np.testing.assert_allclose(micro_losses[name], value, rtol=rtol, err_msg=name)


def _pretraining_trainer(objective, strategy, steps=1, **kwargs):
  tf_keras.utils.set_random_seed(7)
  return pretraining_trainer(_task(objective), strategy, pretraining_examples(8),
                             learning_rate=0.5, gradient_accumulation_steps=steps,
                             **kwargs)[0]


@pytest.fixture(autouse=True)
def _adam_epsilon_one():
  gin.bind_parameter("create_optimizer.epsilon", 1.0)


@pytest.mark.parametrize("objective", OBJECTIVES + (
    "electra_15", "replace_mlm", "all_tokens_mlm", "two_stage_electra", "adversarial_electra"))
@pytest.mark.slow
def test_micro_batches_give_the_whole_batch_update_on_one_replica(objective):
  _assert_same_update(_pretraining_trainer(objective, tf.distribute.get_strategy()), 4)


# TEAMS: three losses, one with labels from the model (multi-word selection); the other
# objectives on two replicas are the slow test below (~1 min of CPU together).
@pytest.mark.slow
def test_micro_batches_give_the_whole_batch_update_on_two_replicas(two_replica_strategy):
  _assert_same_update(_pretraining_trainer("teams", two_replica_strategy), 2)


@pytest.mark.slow
@pytest.mark.parametrize("objective", ["bert", "electra", "electra_hp_loss", "electra_hp_dist",
                                       "script"])
def test_every_objective_accumulates_exactly_on_two_replicas(objective, two_replica_strategy):
  _assert_same_update(_pretraining_trainer(objective, two_replica_strategy), 2)


@pytest.mark.slow  # XLA compiles the whole step twice: minutes on 2 cores
def test_compiled_step_with_fused_lamb_accumulates_exactly():
  """Through orbit's loop: the accumulation loop inside the one XLA computation."""
  gin.bind_parameter("create_optimizer.optimizer", "lamb")
  results = []
  for steps in (1, 4):
    trainer = _pretraining_trainer("electra", tf.distribute.get_strategy(), steps,
                                   jit_compile=True)
    assert trainer.compiles_whole_step
    logs = trainer.train(tf.constant(1))
    results.append(([w.numpy() for w in trainer.model.trainable_weights], logs))
  (whole, whole_logs), (micro, micro_logs) = results
  for a, b in zip(whole, micro):
    np.testing.assert_allclose(b, a, atol=ATOL)
  np.testing.assert_allclose(micro_logs["total_loss"], whole_logs["total_loss"], rtol=1e-5)
  np.testing.assert_allclose(micro_logs["disc_auc"], whole_logs["disc_auc"], rtol=1e-4)


@pytest.mark.slow
def test_mixed_float16_accumulates_the_unscaled_gradients():
  try:
    precision.set_precision_policy("mixed_float16")
    trainer = _pretraining_trainer("bert", tf.distribute.get_strategy(),
                                   precision_policy="mixed_float16")
    # float16 activations: the micro-batches' matmuls round differently from the batch's.
    _assert_same_update(trainer, 4, atol=1e-4, rtol=1e-3)
  finally:
    precision.set_precision_policy("float32")


@pytest.mark.parametrize("kind", ["glue", "tagging"])
@pytest.mark.parametrize("replicas", [1, 2])
@pytest.mark.slow
def test_finetuning_with_layerwise_decay_accumulates_exactly(tmp_path, replicas, kind, request):
  strategy = (request.getfixturevalue("two_replica_strategy") if replicas == 2
              else tf.distribute.get_strategy())
  task = _finetuning_task(kind, tmp_path)
  tf_keras.utils.set_random_seed(7)
  _assert_same_update(finetuning_trainer(task, learning_rate=0.5, strategy=strategy),
                      4 // replicas)


def test_whole_batch_denominators_count_the_real_tokens_and_masked_positions():
  task = _task("electra")
  batch = {name: tf.constant(value) for name, value in pretraining_examples(4).items()}
  outputs = task.build_model()(task.model_inputs(batch, tf.constant(0), True))
  spec = tf.nest.map_structure(lambda t: tf.TensorSpec([1, *t.shape[1:]], t.dtype), outputs)
  # MLM over 3 + 2 + 3 + 2 masked positions, RTD over 16 + 12 + 16 + 12 real tokens.
  assert [float(d) for d in whole_batch_denominators(task, batch, spec)] == [10.0, 56.0]


def test_accumulation_steps_must_divide_each_replicas_batch(two_replica_strategy):
  with pytest.raises(UserError, match=r"gradient_accumulation_steps=4 .*train_batch_size=4 "
                                      r"over 2 replica"):
    _pretraining_trainer("bert", two_replica_strategy, 4)


@pytest.mark.slow
def test_a_nonfinite_micro_batch_skips_the_update_and_its_metric_updates():
  examples = pretraining_examples(8)
  examples["masked_lm_weights"][5] = np.nan  # batch 2's second micro-batch
  tf_keras.utils.set_random_seed(7)
  trainer = pretraining_trainer(_task("bert"), tf.distribute.get_strategy(), examples,
                                gradient_accumulation_steps=4)[0]
  output = trainer.train(tf.constant(2))  # batch 1 good, batch 2 skipped
  assert output["nonfinite_steps"] == 1
  assert int(trainer.optimizer.iterations.numpy()) == 2
  # Only batch 1's 3 + 2 + 3 + 2 masked positions were counted, none of batch 2's.
  assert float(trainer.train_metrics["masked_lm_accuracy"].count.numpy()) == 10.0
