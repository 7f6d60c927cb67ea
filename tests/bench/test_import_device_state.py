"""bench/import_device_state.py: the encoder device_pretrain.py wrote back fine-tunes as the
TensorFlow-trained checkpoint it mirrors, with no encoder bindings."""
import json
import os

import gin
import pytest

from bench import import_device_state
from data.finetuning.create_records import create_glue_data
from data.user_error import UserError
import official_runner
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from training.experiment import run_experiment


def _finetune(init_checkpoint, records, model_dir):
  """(final eval metrics, dev-set test predictions file) of a few SST-2 steps from
  `init_checkpoint`, with no encoder binding (the run's gin record gives the encoder)."""
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "glue_sst2.gin")],
      [f"init_checkpoint = '{init_checkpoint}'", f"data_dir = '{records}'",
       f"predictions_dir = '{model_dir / 'predictions'}'", "train_batch_size = 4",
       "GlueTask.write_test_predictions = True",
       "RuntimeConfig.distribution_strategy = 'default'",
       "TrainerConfig.steps_per_loop = 2", "TrainerConfig.summary_interval = 2"])
  final = run_experiment("train_and_eval", str(model_dir))
  return final, (model_dir / "predictions" / "SST-2.tsv").read_text()


@pytest.mark.slow
def test_imported_state_fine_tunes_as_the_tensorflow_checkpoint(trained, tmp_path):
  output, _ = trained
  imported = tmp_path / "imported"
  prefix = import_device_state.run(str(output / "device"), str(imported))
  assert os.path.basename(prefix) == "ckpt-20"
  record = (imported / "train_config.gin").read_text()
  assert "encoder_config.vocab_size = 100" in record and "'num_layers': 1" in record

  folder = tmp_path / "SST-2"
  sentences = ["a good day", "a bad day", "good bread", "bad water", "the day is good"]
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"],
            [(s, i % 2) for i, s in enumerate(sentences)] * 2)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"], [("good", 1), ("bad", 0)])
  write_tsv(str(folder / "test.tsv"), ["index", "sentence"],
            [(i, s) for i, s in enumerate(sentences)])
  create_glue_data("sst2", tokenizer(), str(tmp_path / "records"), 16, input_dir=str(folder))
  ours, our_predictions = _finetune(imported, tmp_path / "records", tmp_path / "from_device")
  theirs, their_predictions = _finetune(output / "tf_run" / "ckpt-20", tmp_path / "records",
                                        tmp_path / "from_tensorflow")
  assert our_predictions == their_predictions and len(our_predictions.splitlines()) == 6
  assert ours["accuracy"] == theirs["accuracy"]
  assert ours["total_loss"] == pytest.approx(theirs["total_loss"], abs=1e-4)


@pytest.mark.slow
def test_import_refuses_without_writing(trained, tmp_path):
  output, _ = trained
  with pytest.raises(UserError, match=r"encoder\.json is missing: --device_output must be "):
    import_device_state.run(str(tmp_path), str(tmp_path / "a"))
  broken = tmp_path / "broken"
  broken.mkdir()
  record = json.loads((output / "device" / "encoder.json").read_text())
  (broken / "encoder.json").write_text(json.dumps(record))
  with pytest.raises(UserError, match=rf"names {record['files'][0]}, missing from {broken}"):
    import_device_state.run(str(broken), str(tmp_path / "b"))
  assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
