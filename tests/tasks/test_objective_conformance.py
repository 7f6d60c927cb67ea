"""Every registered objective, at tiny dimensions, does what the runner needs of it.

Per objective (tasks/registry.py), from its own small paper config with tiny bindings: the
config builds exactly the registered task class and has a FLOPs count; the runner's trainer
takes steps on one fixed batch and the loss falls; a training checkpoint restores equal
weights into a fresh model; the model's HuggingFace parts export and load back equal (or,
with relative positions, export_hf refuses them).
"""
import math

import gin
import numpy as np
import pytest
import tensorflow as tf

from bench import flops
import official_runner
from tasks import registry
from tests.kit import pretraining as helpers
from tests.kit import trainers
from training.checkpoints import check_same_model
from training.checkpoints import training_checkpoint
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts

# The "tiny" encoder with E == H (BertForMaskedLM has no embedding_size) and no dropout,
# over the helpers' batches (vocab 60, seq 16, 3 masked positions, batch 4).
TINY = [
    "encoder_config.size = 'tiny'",
    f"encoder_config.vocab_size = {helpers.VOCAB}",
    "encoder_config.overrides = {'embedding_size': 32, 'dropout_rate': 0.0, "
    "'attention_dropout_rate': 0.0}",
    f"PretrainingData.seq_length = {helpers.SEQ}",
    f"PretrainingData.max_predictions_per_seq = {helpers.PREDICTIONS}",
    "PretrainingData.train_batch_size = 4",
    "PretrainingData.eval_batch_size = 4",
]
STEPS = 8


def tiny_task(entry: registry.Objective):
  official_runner.parse_config([entry.config_file("small")], TINY)
  return gin.query_parameter("run_experiment.task").scoped_configurable_fn()


def built_model(task):
  model = task.build_model()
  batch = task.dummy_batch(2)
  model(task.model_inputs(batch, tf.constant(0, tf.int64), training=False), training=False)
  return model


def part_weights(model):
  """part name -> the values of its encoder's and head's weights, in order."""
  return {part.name: [weight.numpy() for layer in (part.encoder, part.head)
                      if layer is not None for weight in layer.weights]
          for part in hf_parts(model)}


@pytest.mark.parametrize("name", registry.names())
@pytest.mark.slow
def test_objective_builds_trains_restores_and_exports(name, tmp_path):
  entry = registry.objective(name)
  task = tiny_task(entry)
  assert type(task) is entry.task_class  # pylint: disable=unidiomatic-typecheck
  totals = flops.step_totals(flops.objective_terms(task), batch_size=1)
  assert totals["train"] > totals["forward"] > 0

  strategy = tf.distribute.get_strategy()
  trainer, _ = trainers.pretraining_trainer(task, strategy, helpers.pretraining_examples(4),
                                     learning_rate=3e-3)
  losses = [trainer.train(tf.constant(1))["total_loss"] for _ in range(STEPS)]
  assert all(math.isfinite(loss) for loss in losses), losses
  assert np.mean(losses[-3:]) < losses[0], losses  # one fixed batch: it learns it

  prefix = training_checkpoint(trainer.model, trainer.optimizer).save(str(tmp_path / "ckpt"))
  restored = built_model(task)
  check_same_model(restored, prefix, name)
  tf.train.Checkpoint(model=restored).read(prefix).expect_partial()
  assert len(restored.weights) == len(trainer.model.weights)
  for trained, weight in zip(trainer.model.weights, restored.weights):
    np.testing.assert_array_equal(weight.numpy(), trained.numpy(), err_msg=weight.name)

  if task.encoder_config.relative_position != "none":
    # ELECTRA-HP's configs add T5's relative position, which transformers' ELECTRA lacks
    # (its HuggingFace round trip without it: tests/training/hf/test_hf_interop.py).
    with pytest.raises(ValueError, match="--mode=export_hf: .* relative_position='t5'"):
      export_hf(trainer.model, str(tmp_path / "hf"))
    return
  written = export_hf(trainer.model, str(tmp_path / "hf"))
  assert sorted(written) == sorted(part.name for part in hf_parts(trainer.model))
  imported = built_model(task)
  warm_start_model(imported, written[hf_parts(imported)[0].name], written.get("generator", ""))
  expected = part_weights(trainer.model)
  for part_name, values in part_weights(imported).items():
    assert len(values) == len(expected[part_name]) > 0
    for index, (value, trained) in enumerate(zip(values, expected[part_name])):
      np.testing.assert_array_equal(value, trained, err_msg=f"{part_name} weight {index}")
