"""The tagging speed benchmark compares like with like: the same parameter count, the same
training loss at the same weights' shapes, and both servers tag the same words."""
import numpy as np
import pytest

from bench import tagging_speed
from data.tokenization import make_tokenizer
from modeling.layers.encoder_config import encoder_config


@pytest.mark.slow
def test_both_models_have_the_same_shape_and_train():
  config = encoder_config("tiny", 100)
  batch = tagging_speed.random_batch(2, 8, 100, 3)
  assert (batch["label_ids"].numpy()[:, ::2] == -1).all()
  counts, losses = {}, {}
  for name, build in (("ours", tagging_speed.ours), ("transformers", tagging_speed.theirs)):
    run, counts[name] = tagging_speed.step_runner(build, config, 3, batch)
    losses[name] = [run(1), run(1)]
  assert counts["ours"] == counts["transformers"]
  for first, second in losses.values():
    assert np.isfinite([first, second]).all()


@pytest.mark.slow
def test_both_servers_tag_each_word_of_the_same_sentences(tmp_path):
  config = encoder_config("tiny", make_tokenizer(tagging_speed.SAMPLE_VOCAB).vocab_size)
  sentences = tagging_speed.serving_sentences(make_tokenizer(tagging_speed.SAMPLE_VOCAB), 32,
                                              6)
  assert len(sentences) == 6
  labels = ["A", "B", "C"]
  ours = tagging_speed.our_server(config, labels, 32, str(tmp_path))(sentences)
  theirs = tagging_speed.their_server(config, labels)(sentences)
  assert [sum(tag != b"" for tag in row) for row in ours] == [len(row) for row in theirs]
  assert {tag.decode() for row in ours for tag in row if tag} <= set(labels)


@pytest.mark.slow
def test_imports_beside_the_pretraining_benchmarks():
  """Its flags are defined when it runs, so a process (a test worker) that imports it and
  bench.throughput (bench.pretraining_setup's --size, --batch_size) defines each flag once."""
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  result = subprocess.run([sys.executable, "-c", "import bench.tagging_speed, bench.throughput"],
                          cwd=tagging_speed.REPO_ROOT, capture_output=True, text=True,
                          check=False)
  assert result.returncode == 0, result.stderr[-2000:]
