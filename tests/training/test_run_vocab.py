"""The vocab and casing travel with records, checkpoints and exports; runs on ram:// work."""
import json
import os
import shutil

import gin
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizer ops

from data import tokenization
from data.user_error import UserError
import official_runner
from tasks.pretraining_task import PretrainingData
from tests.kit import export_models
from tests.kit import paths
from tests.kit import record_job
from tests.kit.runs import tiny_electra_bindings
from training.experiment import run_experiment
from training.run_vocab import check_init_checkpoint_vocab
from training.run_vocab import read_run_vocab
from training.run_vocab import records_vocab
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task
from training.serving.export_task import export_vocab

SAMPLE = paths.SAMPLE_VOCAB


class _PretrainingTask:  # what records_vocab reads of a pretraining task
  def __init__(self, pattern):
    self.data = PretrainingData(train_file_pattern=pattern)


def _bindings(records, train_steps):
  """A tiny ELECTRA run on records of the sample vocab (seq 64, 10 predictions)."""
  pattern = os.path.join(records, "pretrain-*")
  changed = {"encoder_config.vocab_size": "7669", "PretrainingData.seq_length": "64",
             "PretrainingData.max_predictions_per_seq": "10"}
  bindings = []
  for binding in tiny_electra_bindings(pattern, pattern, train_steps=train_steps):
    name = binding.split(" = ")[0]
    bindings.append(f"{name} = {changed[name]}" if name in changed else binding)
  return bindings


@pytest.mark.slow
def test_train_and_eval_and_export_run_on_another_filesystem_with_the_records_vocab(tmp_path):
  root = f"ram://{tmp_path.name}"
  records, run = f"{root}/records", f"{root}/run"
  record_job.make_records(records, dupe_factor=1, num_shards=2)
  official_runner.parse_config([], _bindings(records, train_steps=2))
  final = run_experiment("train_and_eval", run)
  with tf.io.gfile.GFile(f"{run}/metrics.jsonl") as f:
    lines = [json.loads(line) for line in f]
  assert [(line["step"], line["split"]) for line in lines] == [(2, "eval")]
  assert final["disc_loss"] == pytest.approx(lines[0]["disc_loss"])
  assert tf.train.latest_checkpoint(run).endswith("ckpt-2")
  assert read_run_vocab(run) == RunVocab(f"{run}/vocab.txt", True)

  run_experiment("export", run)  # no ExportConfig.vocab_file: the run's copy
  encoder = tf.saved_model.load(f"{run}/export/encoder/2")
  assert {"serving_default", "encode", "serve_examples", "encode_text",
          "encode_text_pair"} <= set(encoder.signatures)
  text = "In the beginning God created the heaven and the earth."
  ids = tokenization.WordpieceTokenizer(SAMPLE).tokenize_flat([text])[0]
  word_ids = np.zeros([1, 64], np.int32)
  word_ids[0, :len(ids) + 2] = [2] + list(ids) + [3]  # [CLS] ... [SEP]
  by_ids = encoder.signatures["encode"](input_word_ids=tf.constant(word_ids),
                                        input_mask=tf.constant((word_ids > 0).astype(np.int32)),
                                        input_type_ids=tf.zeros_like(word_ids))
  by_text = encoder.signatures["encode_text"](text=tf.constant([text]))
  np.testing.assert_allclose(by_text["pooled_output"], by_ids["pooled_output"], atol=1e-5)
  for name in ("encoder", "hub_preprocessor", "hub_encoder"):
    assert read_run_vocab(f"{run}/export/{name}/2") is not None, name


def test_records_keep_their_vocab_when_moved(tmp_path, monkeypatch):
  record_job.make_records(tmp_path / "made", dupe_factor=1, num_shards=1)
  shutil.move(str(tmp_path / "made"), str(tmp_path / "moved"))
  monkeypatch.chdir(tmp_path)
  vocab = records_vocab(_PretrainingTask(str(tmp_path / "moved" / "pretrain-*")))
  assert vocab == RunVocab(str(tmp_path / "moved" / "vocab.txt"), True)
  assert records_vocab(_PretrainingTask(str(tmp_path / "none-*"))) is None


def test_another_casing_or_vocab_stops_a_resumed_run_an_export_and_a_warm_start(tmp_path):
  run = str(tmp_path / "run")
  write_run_vocab(run, RunVocab(SAMPLE, True))
  write_run_vocab(run, RunVocab(SAMPLE, True))  # the same again: fine
  with pytest.raises(ValueError, match=r"run was trained with another vocab than this "
                     r"run's: .*vocab.txt is used with lower_case=True, .*vocab.txt with "
                     r"lower_case=False"):
    write_run_vocab(run, RunVocab(SAMPLE, False))
  other = tmp_path / "other.txt"
  other.write_text("\n".join(tokenization.SPECIAL_TOKENS + ("a", "b")) + "\n")
  with pytest.raises(ValueError, match="hold different tokens"):
    write_run_vocab(run, RunVocab(str(other), True))

  task = _PretrainingTask("")
  with pytest.raises(ValueError, match=f"ExportConfig: {run} was trained with another vocab: "
                     ".*lower_case=True.*lower_case=False"):
    export_vocab(task, ExportConfig(vocab_file=SAMPLE, lower_case=False), run)
  assert export_vocab(task, ExportConfig(), run) == RunVocab(f"{run}/vocab.txt", True)

  with pytest.raises(ValueError, match=f"TrainerConfig.init_checkpoint={run}/ckpt-3 was "
                     "trained with another vocab than this run's records"):
    check_init_checkpoint_vocab(f"{run}/ckpt-3", RunVocab(SAMPLE, False))
  check_init_checkpoint_vocab(run, RunVocab(SAMPLE, True))
  gin.clear_config()


def _transformers_folder(folder, vocab_text, settings):
  folder.mkdir()
  (folder / "config.json").write_text('{"model_type": "electra"}')
  (folder / "vocab.txt").write_text(vocab_text)
  if settings is not None:
    (folder / "tokenizer_config.json").write_text(json.dumps(settings))
  return str(folder)


def test_a_transformers_folder_warm_start_is_checked_for_vocab_and_casing(tmp_path):
  with open(SAMPLE, encoding="utf-8") as f:
    sample = f.read()
  same = _transformers_folder(tmp_path / "same", sample, {"do_lower_case": True})
  check_init_checkpoint_vocab(same, RunVocab(SAMPLE, True))
  # Without tokenizer_config.json: transformers' default, lower-casing.
  check_init_checkpoint_vocab(_transformers_folder(tmp_path / "default", sample, None),
                              RunVocab(SAMPLE, True))
  # The same tokens written with Windows line ends are the same vocab.
  check_init_checkpoint_vocab(
      _transformers_folder(tmp_path / "crlf", sample.replace("\n", "\r\n"),
                           {"do_lower_case": True}), RunVocab(SAMPLE, True))
  flipped = _transformers_folder(tmp_path / "flipped", sample, {"do_lower_case": False})
  with pytest.raises(UserError, match=f"TrainerConfig.init_checkpoint={flipped} was trained "
                     r"with another vocab .*lower_case=False, .* with lower_case=True"):
    check_init_checkpoint_vocab(flipped, RunVocab(SAMPLE, True))
  lines = sample.splitlines()
  swapped = _transformers_folder(tmp_path / "swapped", "\n".join(
      lines[:10] + [lines[11], lines[10]] + lines[12:]) + "\n", {"do_lower_case": True})
  with pytest.raises(UserError, match="hold different tokens"):
    check_init_checkpoint_vocab(swapped, RunVocab(SAMPLE, True))


def test_a_tf1_checkpoints_bare_vocab_is_checked_for_tokens_not_casing(tmp_path):
  # google-research/electra's releases ship vocab.txt beside model.ckpt-N; nothing says
  # their casing.
  with open(SAMPLE, encoding="utf-8") as f:
    lines = f.read().splitlines()
  (tmp_path / "model.ckpt-5.index").write_bytes(b"")
  (tmp_path / "vocab.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
  prefix = str(tmp_path / "model.ckpt-5")
  check_init_checkpoint_vocab(prefix, RunVocab(SAMPLE, True))
  check_init_checkpoint_vocab(prefix, RunVocab(SAMPLE, False))
  extended = tmp_path / "extended.txt"
  extended.write_text("\n".join(lines + ["python"]) + "\n", encoding="utf-8")
  with pytest.raises(UserError, match="hold different tokens; the records' vocab extends it: "
                     "bind TrainerConfig.vocab_extension_init = 'mean_of_pieces'"):
    check_init_checkpoint_vocab(prefix, RunVocab(str(extended), True))
  extension = check_init_checkpoint_vocab(prefix, RunVocab(str(extended), True), "random")
  assert (extension.old_size, extension.new_size, extension.row_init) == (
      len(lines), len(lines) + 1, "random")
  with pytest.raises(UserError, match="vocab_extension_init='random', but TrainerConfig."
                     "init_checkpoint=.* keeps no vocab to extend"):
    check_init_checkpoint_vocab(str(tmp_path / "elsewhere" / "model.ckpt-5"),
                                RunVocab(str(extended), True), "random")


def test_a_finetuning_export_whose_vocab_is_gone_names_what_is_missing(tmp_path):
  task = export_models.glue_task(str(tmp_path))
  task.meta_data["vocab_file"] = "gone/vocab.txt"
  assert records_vocab(task) is None
  with pytest.raises(ValueError, match=r"no vocab to export GlueTask with: .*run holds no vocab.txt "
                     r"and the vocab 'gone/vocab.txt' of .*meta_data.json is not there; set "
                     r"ExportConfig.vocab_file"):
    export_for_task(task, export_models.built_model(task), str(tmp_path / "run"), 1)


class _EncoderConfig:  # what records_vocab reads of a task's encoder
  def __init__(self, vocab_size):
    self.vocab_size = vocab_size


def test_a_vocab_larger_than_the_encoder_stops_with_both_numbers_and_the_binding(tmp_path):
  record_job.make_records(tmp_path / "records", dupe_factor=1, num_shards=1)
  task = _PretrainingTask(str(tmp_path / "records" / "pretrain-*"))
  task.encoder_config = _EncoderConfig(7669)  # the sample vocab's size: fits
  assert records_vocab(task) == RunVocab(str(tmp_path / "records" / "vocab.txt"), True)
  task.encoder_config = _EncoderConfig(8000)  # fewer entries than embeddings: fine
  assert records_vocab(task) is not None
  task.encoder_config = _EncoderConfig(7668)
  with pytest.raises(UserError) as error:
    records_vocab(task)
  assert str(error.value) == (
      f"the vocab {tmp_path}/records/vocab.txt has 7669 entries but the encoder only 7668 word "
      "embeddings (encoder_config.vocab_size = 7668): bind encoder_config.vocab_size = 7669 "
      "(or more) in the gin config or --gin_params")


def test_a_run_whose_vocab_exceeds_vocab_size_stops_before_the_first_step(tmp_path):
  records, run = str(tmp_path / "records"), str(tmp_path / "run")
  record_job.make_records(records, dupe_factor=1, num_shards=1)
  bindings = [binding.replace("encoder_config.vocab_size = 7669",
                              "encoder_config.vocab_size = 1000")
              for binding in _bindings(records, train_steps=2)]
  official_runner.parse_config([], bindings)
  try:
    with pytest.raises(UserError, match=r"has 7669 entries but the encoder only 1000 word "
                       r"embeddings"):
      run_experiment("train", run)
  finally:
    gin.clear_config()
  assert tf.train.latest_checkpoint(run) is None
  assert not os.path.exists(os.path.join(run, "vocab.txt"))
  assert not os.path.exists(os.path.join(run, "metrics.jsonl"))


def _pretraining_records(directory, vocab_lines):
  """A records folder as export reads it: a shard name, metadata.json and its vocab copy."""
  os.makedirs(directory)
  with open(os.path.join(directory, "pretrain-00000-of-00001"), "w"):
    pass
  with open(os.path.join(directory, "vocab.txt"), "w") as f:
    f.write("".join(vocab_lines))
  with open(os.path.join(directory, "metadata.json"), "w") as f:
    json.dump({"vocab_file": "vocab.txt", "lower_case": True}, f)
  return _PretrainingTask(os.path.join(directory, "pretrain-*"))


def _sample_lines():
  with open(SAMPLE) as f:
    return f.readlines()


def _swapped(lines, first=1000, second=1001):
  lines = list(lines)
  lines[first], lines[second] = lines[second], lines[first]
  return lines


def test_an_export_checks_the_run_vocab_against_the_records_as_a_resume_does(tmp_path):
  run = str(tmp_path / "run")
  task = _pretraining_records(str(tmp_path / "records"), _sample_lines())
  write_run_vocab(run, records_vocab(task))
  assert export_vocab(task, ExportConfig(), run) == RunVocab(f"{run}/vocab.txt", True)

  # Two lines of the run's copy swapped: the resume and the export both stop, naming both.
  with open(f"{run}/vocab.txt", "w") as f:
    f.write("".join(_swapped(_sample_lines())))
  message = (f"{run} was trained with another vocab than this run's: {run}/vocab.txt and "
             f"{tmp_path}/records/vocab.txt hold different tokens")
  with pytest.raises(UserError) as resumed:
    write_run_vocab(run, records_vocab(task))
  with pytest.raises(UserError) as exported:
    export_vocab(task, ExportConfig(), run)
  assert str(exported.value) == str(resumed.value) == message

  # The run's copy intact, the records bound to records made with another vocab.
  with open(f"{run}/vocab.txt", "w") as f:
    f.write("".join(_sample_lines()))
  other = _pretraining_records(str(tmp_path / "other"), _swapped(_sample_lines()))
  with pytest.raises(UserError, match=f"{run}/vocab.txt and {tmp_path}/other/vocab.txt hold "
                     "different tokens"):
    export_vocab(other, ExportConfig(), run)
  with pytest.raises(UserError, match="hold different tokens"):  # ExportConfig's the run's
    export_vocab(other, ExportConfig(vocab_file=f"{run}/vocab.txt"), run)


def test_an_export_whose_run_vocab_was_deleted_names_the_file(tmp_path, caplog):
  run = str(tmp_path / "run")
  task = _pretraining_records(str(tmp_path / "records"), _sample_lines())
  write_run_vocab(run, records_vocab(task))
  os.remove(f"{run}/vocab.txt")
  with pytest.raises(UserError) as error:
    export_vocab(task, ExportConfig(), run)
  assert str(error.value) == (
      f"{run}/vocab.txt is gone ({run}/tokenization.json says the run kept it): put it "
      "back, or bind ExportConfig.vocab_file to the vocab the run was trained with")
  # Said explicitly, it is taken.
  assert export_vocab(task, ExportConfig(vocab_file=SAMPLE), run) == RunVocab(SAMPLE, True)

  # A run that kept no vocab at all exports with the records' and says so.
  bare = str(tmp_path / "bare")
  os.makedirs(bare)
  with caplog.at_level("WARNING"):
    vocab = export_vocab(task, ExportConfig(), bare)
  assert vocab == RunVocab(f"{tmp_path}/records/vocab.txt", True)
  assert f"{bare} keeps no vocab: exporting with the records' vocab {tmp_path}/records/vocab.txt" \
      in caplog.text
