"""An Electric run killed at step 3 and resumed from step 2 ends with the weights of an
uninterrupted run: the noise draws are replay-exact (per-example seeds of the step), the checkpoint holds
both networks, heads and optimizer slots."""
import gin
import numpy as np
import pytest
import tensorflow as tf

import official_runner
from tests.kit.pretraining import pretraining_examples
from tests.kit.pretraining import write_pretraining_records
from tests.kit.runs import tiny_electra_bindings
from training.experiment import run_experiment
from training.trainer import PretrainingTrainer


def _bindings(train):
  electra = tiny_electra_bindings(train, train, train_steps=4, checkpoint_interval=2)
  return [binding.replace("ElectraPretrainingTask", "ElectricPretrainingTask")
          for binding in electra] + ["PretrainingData.masked_lm_prob = 0.15",
                                     "PretrainingData.mask_strategy = 'electra'"]


def _run(model_dir, bindings):
  gin.clear_config()
  official_runner.parse_config([], bindings)
  return run_experiment("train", str(model_dir))


def _weights(prefix):
  reader = tf.train.load_checkpoint(prefix)
  return {name: reader.get_tensor(name)
          for name, dtype in reader.get_variable_to_dtype_map().items() if dtype.is_floating}


@pytest.mark.slow  # three short runs
def test_a_killed_electric_run_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch):
  train = write_pretraining_records(tmp_path / "train.tfrecord", pretraining_examples(24))
  bindings = _bindings(train)
  _run(tmp_path / "straight", bindings)

  original_loop_end = PretrainingTrainer.train_loop_end

  def killed_during_step_3(trainer):
    output = original_loop_end(trainer)
    if int(trainer.optimizer.iterations.numpy()) == 3:
      raise KeyboardInterrupt("killed")
    return output

  monkeypatch.setattr(PretrainingTrainer, "train_loop_end", killed_during_step_3)
  with pytest.raises(KeyboardInterrupt):
    _run(tmp_path / "resumed", bindings)
  monkeypatch.setattr(PretrainingTrainer, "train_loop_end", original_loop_end)
  assert tf.train.latest_checkpoint(str(tmp_path / "resumed")).endswith("ckpt-2")
  _run(tmp_path / "resumed", bindings)

  straight = _weights(str(tmp_path / "straight" / "ckpt-4"))
  resumed = _weights(str(tmp_path / "resumed" / "ckpt-4"))
  assert len(straight) > 50 and straight.keys() == resumed.keys()
  assert any("cloze" in name for name in straight)
  for name, value in straight.items():
    np.testing.assert_array_equal(resumed[name], value, err_msg=name)
