"""Each objective masks as its paper does, under dynamic and static masking (issue #34).

The real gin files go through the runner's parse path (official_runner.parse_config) with
a tiny encoder and the tiny corpus' records; the task's own input pipeline draws the masks.
"""
import glob
import math
import os

import gin
import numpy as np
import pytest

from data import tokenization
from data.pretraining import shard_files
from data.user_error import user_error_message
from data.user_error import UserError
import official_runner
from tasks import registry
from tests.kit import paths
from tests.kit import record_job
from training import config_origins
from training.experiment import run_experiment

VOCAB = tokenization.load_vocab(paths.SAMPLE_VOCAB)
MASK_ID = VOCAB.index(tokenization.MASK_TOKEN)
SEQ, PREDICTIONS = 32, 5
STATIC = "PretrainingData.masking = 'static'"  # for a dynamic paper config on static records

MASKING_BINDINGS = ("mask_strategy", "masked_lm_prob", "whole_word_mask", "max_ngram")


def _paper_masking(name):
  """The objective's own declaration of its paper's masking (its register(...) call)."""
  masking = registry.objective(name).masking
  assert masking is not None, (
      f"objective {name!r} states no paper masking: pass masking=PaperMasking(...) to its "
      "tasks.registry.register(...) call")
  return masking


def _task(config, pattern, *extra):
  """The config's task over `pattern`, tiny encoder, seq 32, 5 predictions."""
  gin.clear_config()
  official_runner.parse_config([config], [
      "encoder_config.size = 'tiny'", f"encoder_config.vocab_size = {len(VOCAB)}",
      f"PretrainingData.train_file_pattern = '{pattern}'",
      f"PretrainingData.eval_file_pattern = '{pattern}'",
      f"PretrainingData.seq_length = {SEQ}",
      f"PretrainingData.max_predictions_per_seq = {PREDICTIONS}",
      "PretrainingData.train_batch_size = 256", "PretrainingData.eval_batch_size = 4",
      "TrainerConfig.train_steps = 1", "TrainerConfig.steps_per_loop = 1",
      "TrainerConfig.validation_interval = 1", "TrainerConfig.validation_steps = 1",
      "create_optimizer.warmup_steps = 0",
      "RuntimeConfig.distribution_strategy = 'default'"] + list(extra))
  return gin.query_parameter("run_experiment.task").scoped_configurable_fn()


@pytest.fixture(scope="module")
def unmasked_pattern(tmp_path_factory):
  output_dir = tmp_path_factory.mktemp("unmasked")
  record_job.make_records(output_dir, static_masking=False, dupe_factor=1, num_shards=1,
                          max_seq_length=SEQ, max_predictions_per_seq=PREDICTIONS)
  return shard_files.shard_glob(str(output_dir))


def _static_records(root, name, **masking_flags):
  output_dir = root / name
  record_job.make_records(output_dir, dupe_factor=1, num_shards=1, max_seq_length=SEQ,
                          max_predictions_per_seq=PREDICTIONS, **masking_flags)
  return shard_files.shard_glob(str(output_dir))


@pytest.fixture(scope="module")
def electra_masked_pattern(tmp_path_factory):
  return _static_records(tmp_path_factory.mktemp("static"), "electra",
                         mask_strategy="electra")


def test_every_registered_objective_states_its_papers_masking():
  for name in registry.names():
    paper = _paper_masking(name)
    for size in registry.objective(name).sizes():
      gin.clear_config()
      official_runner.parse_config([registry.objective(name).config_file(size)], [])
      # query_parameter raises for a binding the config leaves to the default.
      bound = {binding: gin.query_parameter(f"PretrainingData.{binding}")
               for binding in MASKING_BINDINGS}
      assert bound == paper.bindings(size), (name, size)


def _comment_text(path):
  """The comments of a gin file as one line of words (quotes span comment lines)."""
  with open(os.path.join(official_runner.REPO_ROOT, path), encoding="utf-8") as f:
    comments = [line.strip()[1:] for line in f if line.strip().startswith("#")]
  return " ".join(" ".join(comments).split())


def _file_binding(config, binding):
  """The gin file whose line sets `binding` last in `config`'s chain of includes."""
  origin = config_origins.find_origins([config], [], [official_runner.REPO_ROOT])
  for (_, selector, name), found in origin.bindings.items():
    if f"{selector.split('.')[-1]}.{name}" == binding:
      return found.places[-1].rsplit(":", 1)[0]
  return None


def test_every_paper_config_masks_in_its_papers_mode_and_quotes_it():
  """ELECTRA and SCRIPT mask on the fly, TEAMS 40 static copies (issue #52): each
  config's mode is its objective's declared one, stated in the file that quotes the paper."""
  for name in registry.names():
    paper = _paper_masking(name)
    for size in registry.objective(name).sizes():
      config = registry.objective(name).config_file(size)
      gin.clear_config()
      official_runner.parse_config([config], [])
      task = gin.query_parameter("run_experiment.task").scoped_configurable_fn()
      assert task.data.masking == paper.masking, (name, size)
      if paper.quote is None:  # the paper states none: the default, unstated
        continue
      assert gin.query_parameter("PretrainingData.masking") == paper.masking  # not defaulted
      stated_in = _file_binding(config, "PretrainingData.masking")
      assert paper.quote in _comment_text(stated_in), (name, size, stated_in)


@pytest.mark.parametrize("config", sorted(
    os.path.relpath(path, official_runner.REPO_ROOT) for path in
    glob.glob(os.path.join(official_runner.REPO_ROOT, "configs", "pretrain", "*.gin"))))
def test_each_paper_config_has_room_for_its_masking_rate(config):
  gin.clear_config()
  official_runner.parse_config([config], [])
  seq = gin.query_parameter("PretrainingData.seq_length")
  rate = gin.query_parameter("PretrainingData.masked_lm_prob")
  assert gin.query_parameter("PretrainingData.max_predictions_per_seq") == math.ceil(rate * seq)


def _replacement_counts(task, num_batches):
  """Predictions, and how many became [MASK], a random token or stayed, over the batches."""
  counts = np.zeros(4, np.int64)
  for batch in task.build_inputs(is_training=True).take(num_batches).as_numpy_iterator():
    predicted = batch["masked_lm_weights"] > 0
    now = np.take_along_axis(batch["input_word_ids"], batch["masked_lm_positions"], 1)[predicted]
    original = batch["masked_lm_ids"][predicted]
    is_mask, kept = now == MASK_ID, now == original
    counts += [predicted.sum(), is_mask.sum(), (~is_mask & ~kept).sum(), kept.sum()]
  return counts


@pytest.mark.parametrize("config,fractions", [
    ("configs/pretrain/teams_small.gin", (0.8, 0.1, 0.1)),
    ("configs/pretrain/script_small.gin", (0.8, 0.1, 0.1)),
    ("configs/pretrain/bert_small.gin", (0.8, 0.1, 0.1)),
    ("configs/pretrain/electra_small.gin", (0.85, 0.0, 0.15)),
])
def test_dynamic_masking_draws_the_papers_replacement_fractions(config, fractions,
                                                                unmasked_pattern):
  task = _task(config, unmasked_pattern, "PretrainingData.masking = 'dynamic'")
  masked, to_mask, to_random, kept = _replacement_counts(task, num_batches=10)
  assert masked > 9_000  # 10 batches x 256 sequences x ~4 masked pieces
  # Each masked piece draws its replacement independently (binomial): 5 standard errors
  # (a two-sided p of 6e-7) around the paper's fraction, at most 0.021 for 80% here, while
  # 80/10/10 and 85/0/15 differ by 0.05 or more in each fraction; 85/0/15 draws no random
  # token at all.
  for count, fraction in zip((to_mask, to_random, kept), fractions):
    tolerance = 5 * math.sqrt(fraction * (1 - fraction) / masked)
    assert abs(count / masked - fraction) <= tolerance, (config, count / masked, fraction)
  if fractions[1] == 0.0:
    assert to_random == 0


def _words_and_runs(batch, continuation):
  """Masked whole-word check and the lengths, in words, of each run of masked words."""
  run_lengths = []
  for row in range(len(batch["input_word_ids"])):
    original = batch["input_word_ids"][row].copy()
    weights = batch["masked_lm_weights"][row] > 0
    positions = batch["masked_lm_positions"][row][weights]
    original[positions] = batch["masked_lm_ids"][row][weights]
    masked = np.zeros(len(original), bool)
    masked[positions] = True
    maskable = np.array([VOCAB[i] not in tokenization.SPECIAL_TOKENS for i in original])
    word_start = maskable & ~(continuation[original] & np.r_[False, maskable[:-1]])
    words = np.split(np.arange(len(original)), np.flatnonzero(word_start | ~maskable))
    word_masked = []
    for word in words:
      if len(word) and maskable[word[0]]:
        assert masked[word].all() or not masked[word].any()  # whole words
        word_masked.append(bool(masked[word[0]]))
      else:
        word_masked.append(None)  # a special token ends a run
    run = 0
    for flag in word_masked + [None]:
      if flag:
        run += 1
      elif run:
        run_lengths.append(run)
        run = 0
  return run_lengths


@pytest.mark.slow
def test_electra_hp_masks_ngram_spans_of_whole_words(unmasked_pattern):
  continuation = np.array([token.startswith("##") for token in VOCAB])
  runs = {}
  for name, extra in (("ngram", ()), ("words", ("PretrainingData.max_ngram = 1",))):
    task = _task("configs/pretrain/electra_hp_loss_small.gin", unmasked_pattern,
                 "PretrainingData.masking = 'dynamic'", *extra)
    lengths = []
    for batch in task.build_inputs(is_training=True).take(4).as_numpy_iterator():
      lengths += _words_and_runs(batch, continuation)
    runs[name] = np.array(lengths)
  # Spans of 1..3 words (weights 1/n: 6/11, 3/11, 2/11) against single whole words, whose
  # neighbours are masked only by chance: far more runs of 2+ words (5 standard errors).
  multi = {name: np.mean(lengths >= 2) for name, lengths in runs.items()}
  standard_error = math.sqrt(sum(p * (1 - p) / len(runs[name]) for name, p in multi.items()))
  assert multi["ngram"] - multi["words"] > 5 * standard_error, multi
  assert multi["ngram"] > 0.3 and multi["words"] < 0.2, multi


def test_a_run_on_records_masked_otherwise_stops_before_its_first_step(
    electra_masked_pattern, tmp_path):
  _task("configs/pretrain/teams_small.gin", electra_masked_pattern)
  with pytest.raises(UserError) as error:
    run_experiment("train", str(tmp_path))
  message = user_error_message(error.value)  # what the runner prints after "error: "
  assert "\n" not in message
  assert message.startswith(os.path.join(os.path.dirname(electra_masked_pattern),
                                         "metadata.json"))
  assert ("the records were masked with mask_strategy='electra', but the config asks for "
          "PretrainingData.mask_strategy = 'bert': write them again with python -m "
          "data.create_pretraining_data --mask_strategy=bert --masked_lm_prob=0.15, or set "
          "PretrainingData.allow_masking_mismatch = True to train on them as they are.") in message
  assert not glob.glob(str(tmp_path / "ckpt-*")) and not os.path.exists(
      tmp_path / "metrics.jsonl")


def test_the_override_binding_reads_them_with_a_warning(electra_masked_pattern, caplog):
  task = _task("configs/pretrain/teams_small.gin", electra_masked_pattern,
               "PretrainingData.allow_masking_mismatch = True")
  batch = next(iter(task.build_inputs(is_training=True)))
  assert batch["masked_lm_weights"].shape == (256, PREDICTIONS)
  assert ("the records were masked with mask_strategy='electra', but the config asks for "
          "PretrainingData.mask_strategy = 'bert'; training on them anyway "
          "(PretrainingData.allow_masking_mismatch = True)") in caplog.text


def test_records_masked_as_the_config_asks_and_the_named_variant_pass(
    electra_masked_pattern, tmp_path):
  bert_pattern = _static_records(tmp_path, "bert", mask_strategy="bert")
  for config, pattern in (("configs/pretrain/teams_small.gin", bert_pattern),
                          ("configs/pretrain/script_small.gin", bert_pattern),
                          ("configs/pretrain/electra_small.gin", electra_masked_pattern),
                          ("configs/pretrain/bert_small_electra_masking.gin",
                           electra_masked_pattern)):
    task = _task(config, pattern, STATIC)
    batch = next(iter(task.build_inputs(is_training=True)))
    assert batch["masked_lm_weights"].shape == (256, PREDICTIONS)
  with pytest.raises(UserError, match=r"masked with max_ngram=1, but the config asks for "
                                      r"PretrainingData.max_ngram = 3: .* --max_ngram=3,"):
    _task("configs/pretrain/electra_hp_dist_small.gin",
          electra_masked_pattern, STATIC).build_inputs(is_training=True)


def test_a_dynamic_paper_config_on_static_records_says_how_to_read_them(electra_masked_pattern):
  """ELECTRA's config masks on the fly: static records stop it with one line naming the fix."""
  with pytest.raises(UserError) as error:
    _task("configs/pretrain/electra_small.gin", electra_masked_pattern).build_inputs(
        is_training=True)
  message = user_error_message(error.value)
  assert "\n" not in message
  assert message.endswith("says its records are statically masked: set PretrainingData.masking "
                          "= 'static' to read them, or write unmasked ones for dynamic masking "
                          "with create_pretraining_data --nostatic_masking --dupe_factor=1.")
