"""Fine-tuning through the runner: pretraining checkpoint -> glue_*.gin -> metrics and files."""
import json
import os

import gin
import pytest
import tensorflow as tf

from data.finetuning.create_records import create_glue_data
import official_runner
from tasks.electra_pretraining import ElectraPretrainingTask
from tasks.pretraining_task import PretrainingData
from tests.kit.encoders import FINETUNING_VOCAB_SIZE
from tests.kit.encoders import tiny_encoder
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from training.experiment import run_experiment


@pytest.mark.slow
def test_train_and_eval_from_an_electra_checkpoint(tmp_path):
  pretraining = ElectraPretrainingTask(
      tiny_encoder(FINETUNING_VOCAB_SIZE),
      PretrainingData(seq_length=16, max_predictions_per_seq=3),
      generator_width_multiplier=0.5)
  pretrainer = pretraining.build_model()
  pretrainer(pretraining.model_inputs(pretraining.dummy_batch(), tf.constant(0), False))
  checkpoint = tf.train.Checkpoint(model=pretrainer).write(str(tmp_path / "pretrain" / "ckpt-1"))

  folder = tmp_path / "SST-2"
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"],
            [("a good day", 1), ("a bad day", 0)] * 4)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"], [("good", 1), ("bad", 0)])
  write_tsv(str(folder / "test.tsv"), ["index", "sentence"], [(0, "good bread")])
  create_glue_data("sst2", tokenizer(), str(tmp_path / "records"), 16, input_dir=str(folder))

  model_dir = tmp_path / "run"
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "glue_sst2.gin")],
      [f"init_checkpoint = '{checkpoint}'", f"data_dir = '{tmp_path / 'records'}'",
       f"predictions_dir = '{model_dir / 'predictions'}'", "train_batch_size = 4",
       "GlueTask.write_test_predictions = True", "encoder_config.size = 'tiny'",
       "encoder_config.vocab_size = 100", "RuntimeConfig.distribution_strategy = 'default'",
       "TrainerConfig.steps_per_loop = 2", "TrainerConfig.summary_interval = 2"])
  final = run_experiment("train_and_eval", str(model_dir))
  # 8 records x 3 epochs / batch 4 = 6 steps, one evaluation at the end.
  lines = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  assert [(line["step"], line["split"]) for line in lines] == [(6, "eval")]
  assert set(final) == {"total_loss", "accuracy"} and final["accuracy"] in (0.0, 50.0, 100.0)
  with open(model_dir / "predictions" / "SST-2.tsv") as f:
    assert f.readline() == "index\tprediction\n" and f.readline().startswith("0\t")
