import json
import os

import tensorflow as tf

from scripts import plot_pretraining


def _write_run(model_dir, names):
  writer = tf.summary.create_file_writer(os.path.join(model_dir, "train"))
  with writer.as_default():
    for step in (100, 200):
      for index, name in enumerate(names):
        tf.summary.scalar(name, step / 1000 + index, step=step)
  writer.close()
  with open(os.path.join(model_dir, "metrics.jsonl"), "w") as f:
    f.write(json.dumps({"step": 200, "split": "eval", "disc_auc": 0.75,
                        "masked_lm_accuracy": 0.25}) + "\n")
    f.write(json.dumps({"step": 200, "split": "train_fault", "nonfinite_steps": 1}) + "\n")


def test_reads_training_summaries_and_evaluations_and_draws_their_panels(tmp_path):
  _write_run(str(tmp_path), ["masked_lm_loss", "disc_auc", "learning_rate"])
  train = plot_pretraining.training_series(str(tmp_path))
  assert sorted(train) == ["disc_auc", "masked_lm_loss"]
  assert [step for step, _ in train["disc_auc"]] == [100, 200]
  assert abs(train["disc_auc"][1][1] - 1.2) < 1e-6
  evaluation = plot_pretraining.evaluation_series(str(tmp_path))
  assert evaluation == {"disc_auc": [(200, 0.75)], "masked_lm_accuracy": [(200, 0.25)]}
  output = str(tmp_path / "curves.png")
  assert plot_pretraining.plot(str(tmp_path), output) == ["loss", "disc_auc", "MLM accuracy"]
  with open(output, "rb") as png:
    assert png.read(8) == b"\x89PNG\r\n\x1a\n"


def test_a_bert_run_has_no_disc_auc_panel(tmp_path):
  _write_run(str(tmp_path), ["masked_lm_loss", "masked_lm_accuracy"])
  os.remove(tmp_path / "metrics.jsonl")
  assert plot_pretraining.plot(str(tmp_path), str(tmp_path / "c.png")) == ["loss",
                                                                          "MLM accuracy"]
