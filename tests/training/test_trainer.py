import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import tiny_task
from tests.kit.trainers import pretraining_trainer
from training import precision


def _trainer_and_first_losses(kind, strategy, num_steps=3, jit_compile=False):
  tf_keras.utils.set_random_seed(7)
  trainer, _ = pretraining_trainer(tiny_task(kind), strategy, pretraining_examples(16),
                             learning_rate=3e-3, jit_compile=jit_compile)
  return trainer, [trainer.train(tf.constant(1)) for _ in range(num_steps)]


@pytest.mark.parametrize("kind, jit_compile", [("bert", False), ("electra", False),
                                               ("electra", True)])
@pytest.mark.slow
def test_two_replicas_give_the_same_losses_and_losses_fall(kind, jit_compile,
                                                           two_replica_strategy):
  # Dropout is 0 in tiny_task: dropout masks are drawn per replica, so they do depend on
  # the split. The generator's samples do not (per-example stateless seeds). With
  # jit_compile the 2-replica model runs in XLA, the 1-device one does not.
  assert two_replica_strategy.num_replicas_in_sync == 2
  trainer, single = _trainer_and_first_losses(kind, tf.distribute.get_strategy())
  _, double = _trainer_and_first_losses(kind, two_replica_strategy, jit_compile=jit_compile)
  # XLA fuses and reorders float sums: close losses, but thresholded metrics may move.
  rtol = 1e-3 if jit_compile else 2e-5
  for one, two in zip(single, double):
    for name in (("total_loss", "masked_lm_loss", "disc_loss") if jit_compile else one):
      if name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=rtol, atol=1e-6, err_msg=name)

  for _ in range(4):
    last = trainer.train(tf.constant(10))
  first = single[0]
  assert last["masked_lm_loss"] < first["masked_lm_loss"] - 0.5
  assert last["total_loss"] < first["total_loss"]
  assert last["nonfinite_steps"] == 0
  if kind == "electra":
    assert last["disc_loss"] < first["disc_loss"]
    for name in ("disc_accuracy", "disc_precision", "disc_recall", "disc_auc",
                 "sampled_token_correct_rate", "masked_lm_accuracy"):
      assert 0.0 <= last[name] <= 1.0, name


def _poison(examples, rows):
  poisoned = {name: value.copy() for name, value in examples.items()}
  poisoned["masked_lm_weights"][rows] = np.nan
  return poisoned


@pytest.mark.slow
def test_nonfinite_steps_are_skipped_reported_and_trigger_rollback():
  # Batches of 4: batch 1 (rows 4-7) is poisoned, then everything from batch 3 on.
  examples = _poison(pretraining_examples(40), list(range(4, 8)) + list(range(12, 40)))
  rollbacks = []
  trainer, _ = pretraining_trainer(tiny_task("bert"), tf.distribute.get_strategy(), examples,
                             max_consecutive_bad_steps=3,
                             rollback=rollbacks.append)
  weights = [w.numpy() for w in trainer.model.trainable_weights]

  output = trainer.train(tf.constant(3))  # good, bad, good
  assert output["nonfinite_steps"] == 1
  assert np.isfinite(output["total_loss"]) and np.isfinite(output["masked_lm_accuracy"])
  assert int(trainer.optimizer.iterations.numpy()) == 3  # the skipped step still counts
  assert not rollbacks

  changed = [w.numpy() for w in trainer.model.trainable_weights]
  output = trainer.train(tf.constant(2))  # two bad steps: nothing applied, no rollback yet
  assert output["nonfinite_steps"] == 2 and not rollbacks
  assert all(np.array_equal(a, w.numpy())
             for a, w in zip(changed, trainer.model.trainable_weights))
  assert all(np.isfinite(w.numpy()).all() for w in trainer.model.trainable_weights)
  assert not all(np.array_equal(a, b) for a, b in zip(weights, changed))

  trainer.train(tf.constant(1))  # third bad step in a row: roll back
  assert rollbacks == [3]  # the last good step: 3 (steps 4-6 were skipped)
  assert int(trainer.consecutive_bad_steps.numpy()) == 0


@pytest.mark.slow
def test_evaluation_reports_every_metric_over_the_whole_eval_set():
  trainer, _ = pretraining_trainer(tiny_task("electra"), tf.distribute.get_strategy(),
                             pretraining_examples(16), eval_examples=pretraining_examples(10))
  trainer.train(tf.constant(2))
  output = trainer.evaluate(tf.constant(-1))
  assert set(output) == {"total_loss", "masked_lm_loss", "disc_loss", "masked_lm_accuracy",
                         "sampled_token_correct_rate", "disc_accuracy", "disc_precision",
                         "disc_recall", "disc_auc"}
  # 10 examples in batches of 4, the last partial batch dropped: 8 examples count.
  assert trainer.eval_losses.count.numpy() == 8
  # Same batches, same seeds: an evaluation is repeatable.
  assert trainer.evaluate(tf.constant(-1)) == output


@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
@pytest.mark.slow
def test_mixed_precision_trains_with_float32_losses(policy):
  try:
    precision.set_precision_policy(policy)
    trainer, _ = pretraining_trainer(tiny_task("bert"), tf.distribute.get_strategy(),
                               pretraining_examples(16), learning_rate=3e-3,
                               precision_policy=policy)
    first = trainer.train(tf.constant(3))
    last = trainer.train(tf.constant(10))
  finally:
    precision.set_precision_policy("float32")
  assert precision.is_loss_scaled(trainer.optimizer) == (policy == "mixed_float16")
  assert trainer.model.encoder.compute_dtype == policy.split("_")[1]
  assert trainer.model.encoder.embedding_table.dtype == tf.float32
  assert np.isfinite(last["total_loss"]) and last["total_loss"] < first["total_loss"]
