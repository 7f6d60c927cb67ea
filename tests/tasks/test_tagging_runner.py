"""Token tagging from a fresh clone, as the guide runs it: records from a CoNLL file
(`python -m data.create_finetuning_data --task=tagging`), then `official_runner.py
--mode=train_and_eval` with configs/finetune/tagging.gin, whose eval record holds span F1
overall and per type; run again for more epochs, it resumes from its checkpoint; then
`--mode=export` given only the run's folder."""
import json
import os
import subprocess
import sys

import pytest

from tests.kit.paths import FINETUNING_TESTDATA
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.paths import REPO_ROOT

TAGGING = os.path.join(FINETUNING_TESTDATA, "tagging")


def _run(*args):
  result = subprocess.run([sys.executable, *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600, check=False)
  assert result.returncode == 0, result.stderr[-3000:]
  return result.stdout


@pytest.mark.slow  # three programs in subprocesses
def test_records_from_conll_then_train_and_eval_reports_span_f1_per_type(tmp_path):
  records, model_dir = tmp_path / "records", tmp_path / "tagger"
  printed = _run("-m", "data.create_finetuning_data", "--task=tagging",
                 f"--train_file={TAGGING}/conll2003_train.txt",
                 f"--dev_file={TAGGING}/conll2003_dev.txt", "--tag_scheme=iob1",
                 f"--vocab_file={FINETUNING_VOCAB}", f"--output_dir={records}",
                 "--max_seq_length=16")
  assert "train: 3 sentences, 0 split into windows" in printed
  runner = ["official_runner.py", "--mode=train_and_eval",
            "--gin_file=configs/finetune/tagging.gin", f"--model_dir={model_dir}",
            f"--gin_param=data_dir='{records}'", "--gin_param=train_batch_size=2",
            f"--gin_param=predictions_dir='{model_dir / 'predictions'}'",
            "--gin_param=encoder_config.size='tiny'", "--gin_param=encoder_config.vocab_size=100",
            "--gin_param=RuntimeConfig.distribution_strategy='default'",
            "--gin_param=TrainerConfig.steps_per_loop=2"]
  _run(*runner)
  lines = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  # 3 sentences x 3 epochs / batch 2 = 5 steps (rounded up), one evaluation at the end.
  assert [(line["step"], line["split"]) for line in lines] == [(5, "eval")]
  record = lines[0]
  # The dev sentence holds one span, I-LOC; the types are those found in gold or predictions.
  for name in ("f1", "precision", "recall", "accuracy", "f1_LOC", "precision_LOC",
               "recall_LOC"):
    assert 0.0 <= record[name] <= 100.0, name
  assert record["accuracy"] in (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)  # 5 words
  with open(model_dir / "predictions" / "dev_predictions.tsv") as f:
    assert len(f.read().splitlines()) == 1 + 5
  _run(*runner, "--gin_param=finetuning_steps.epochs=6", "--allow_config_change")
  lines = [json.loads(line) for line in open(model_dir / "metrics.jsonl")]
  assert [(line["step"], line["split"]) for line in lines] == [(5, "eval"), (9, "eval")]
  # Exports need the mode and the run alone: the run's record is the config.
  printed = _run("official_runner.py", "--mode=export", f"--model_dir={model_dir}")
  assert f"config: {model_dir}/train_and_eval_config.gin (the run's record; --gin_param " \
         "bindings apply after it)" in printed
  assert os.path.isdir(model_dir / "export" / "tagging" / "9")
