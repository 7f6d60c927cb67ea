"""official_runner.py --mode=train_and_eval with Electric's paper config (tiny dims) trains on
unmasked sample records and writes held-out disc_auc and cloze accuracy to metrics.jsonl."""
import json
import math
import os
import subprocess
import sys

import pytest

from data import tokenization
from data.pretraining import shard_files
import official_runner
from tests.kit import paths
from tests.kit import record_job

SEQ, PREDICTIONS = 32, 5


@pytest.mark.slow  # about 2-4 min: record job and a runner subprocess
@pytest.mark.parametrize("config", ["configs/pretrain/electric_small.gin"])
def test_runner_trains_and_evaluates_electric(config, tmp_path):
  records = tmp_path / "records"
  record_job.make_records(records, static_masking=False, dupe_factor=1, num_shards=1,
                          max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS)
  pattern = shard_files.shard_glob(str(records))
  vocab_size = len(tokenization.load_vocab(paths.SAMPLE_VOCAB))
  bindings = [
      "encoder_config.size = 'tiny'", f"encoder_config.vocab_size = {vocab_size}",
      f"PretrainingData.train_file_pattern = '{pattern}'",
      f"PretrainingData.eval_file_pattern = '{pattern}'",
      f"PretrainingData.seq_length = {SEQ}",
      f"PretrainingData.max_predictions_per_seq = {PREDICTIONS}",
      "PretrainingData.train_batch_size = 8", "PretrainingData.eval_batch_size = 8",
      "TrainerConfig.train_steps = 4", "TrainerConfig.steps_per_loop = 2",
      "TrainerConfig.summary_interval = 2", "TrainerConfig.validation_interval = 4",
      "TrainerConfig.validation_steps = 2", "TrainerConfig.checkpoint_interval = 4",
      "create_optimizer.warmup_steps = 0",
      "RuntimeConfig.distribution_strategy = 'default'"]
  model_dir = tmp_path / "run"
  completed = subprocess.run(
      [sys.executable, os.path.join(official_runner.REPO_ROOT, "official_runner.py"),
       "--mode=train_and_eval", f"--gin_file={config}", f"--model_dir={model_dir}"] +
      [f"--gin_param={binding}" for binding in bindings],
      cwd=tmp_path, capture_output=True, text=True, timeout=900,
      env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), check=False)
  assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
  with open(model_dir / "metrics.jsonl", encoding="utf-8") as f:
    records_written = [json.loads(line) for line in f]
  evaluation = [r for r in records_written if r.get("split") == "eval"][-1]
  assert evaluation["step"] == 4
  for name in ("disc_auc", "cloze_accuracy", "masked_lm_accuracy"):
    assert 0.0 <= evaluation[name] <= 1.0, (name, evaluation)
  for name in ("cloze_loss", "disc_loss", "total_loss"):
    assert math.isfinite(evaluation[name]) and evaluation[name] > 0, (name, evaluation)
  assert (model_dir / "ckpt-4.index").exists()
