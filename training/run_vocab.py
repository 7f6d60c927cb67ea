"""The vocab and casing a run tokenizes with, kept next to its checkpoints and in its exports.

A run that trains copies them into DIR (`vocab.txt`, or `spiece.model` for a SentencePiece
model, and `tokenization.json` = {"lower_case", "tokenizer"}),
from its records: a fine-tuning task's `meta_data.json`, or the `metadata.json` written next
to pretraining shards. Export reads them back from DIR, so text signatures exist whenever the
run's records named a vocab, and the casing is the one the model was trained with; an
ExportConfig or a resumed run that disagrees with DIR's copy (another tokenizer kind, other
tokens, other casing) stops, naming both.
"""
import dataclasses
import json
import os
from typing import Optional

from absl import logging
import tensorflow as tf

from data import tokenization
from data.user_error import UserError
from data import vocab_extension
from training import extension_warm_start

VOCAB_FILE = "vocab.txt"
SENTENCEPIECE_MODEL_FILE = "spiece.model"
TOKENIZATION_FILE = "tokenization.json"
PRETRAINING_METADATA_FILE = "metadata.json"


@dataclasses.dataclass(frozen=True)
class RunVocab:
  """A WordPiece vocab file or SentencePiece model, and whether text is lower-cased (and
  accent-stripped) for it (None: not known, e.g. the vocab.txt beside a TF1 checkpoint)."""
  vocab_file: str
  lower_case: Optional[bool]

  @property
  def kind(self) -> str:
    """tokenization.WORDPIECE or tokenization.SENTENCEPIECE, from the file's contents."""
    return tokenization.tokenizer_kind(self.vocab_file)

  @property
  def copy_name(self) -> str:
    """The name of the copy kept in a run or export directory."""
    return SENTENCEPIECE_MODEL_FILE if self.kind == tokenization.SENTENCEPIECE else VOCAB_FILE

  def tokens(self) -> bytes:
    with tf.io.gfile.GFile(self.vocab_file, "rb") as f:
      return f.read()

  def normalisation_disagreement(self, other: "RunVocab") -> Optional[str]:
    """Why `other` reads text otherwise than this vocab before splitting it (another
    tokenizer kind or casing), or None when it does not or a casing is not known."""
    if self.kind != other.kind:
      return (f"{self.vocab_file} is a {self.kind} vocab, {other.vocab_file} a {other.kind} "
              "one")
    # A SentencePiece model's normaliser decides its casing: its bytes say it all.
    if (None not in (self.lower_case, other.lower_case) and
        self.lower_case != other.lower_case and self.kind != tokenization.SENTENCEPIECE):
      return (f"{self.vocab_file} is used with lower_case={self.lower_case}, "
              f"{other.vocab_file} with lower_case={other.lower_case}")
    return None

  def disagreement(self, other: "RunVocab") -> Optional[str]:
    """Why `other` tokenizes text differently from this vocab, or None when it does not."""
    reason = self.normalisation_disagreement(other)
    if reason:
      return reason
    if self.tokens() != other.tokens() and (tokenization.load_vocab(self.vocab_file) !=
                                            tokenization.load_vocab(other.vocab_file)):
      return f"{self.vocab_file} and {other.vocab_file} hold different tokens"
    return None


def read_run_vocab(directory: str) -> Optional[RunVocab]:
  """The RunVocab saved in `directory` (a run or an export), or None."""
  settings_file = os.path.join(directory, TOKENIZATION_FILE)
  vocab_file = os.path.join(directory, VOCAB_FILE)
  if not tf.io.gfile.exists(vocab_file):
    vocab_file = os.path.join(directory, SENTENCEPIECE_MODEL_FILE)
  if not (tf.io.gfile.exists(vocab_file) and tf.io.gfile.exists(settings_file)):
    return None
  with tf.io.gfile.GFile(settings_file) as f:
    return RunVocab(vocab_file, bool(json.load(f)["lower_case"]))


def write_run_vocab(directory: str, vocab: RunVocab) -> None:
  """Copies `vocab` into `directory` (vocab.txt or spiece.model, then tokenization.json).

  Raises:
    ValueError: `directory` already holds another vocab or casing (e.g. a resumed run whose
      new records were made with another vocab).
  """
  if read_run_vocab(directory) is not None:
    check_run_vocab(directory, vocab)
    return
  tf.io.gfile.makedirs(directory)
  tf.io.gfile.copy(vocab.vocab_file, os.path.join(directory, vocab.copy_name), overwrite=True)
  with tf.io.gfile.GFile(os.path.join(directory, TOKENIZATION_FILE), "w") as f:
    json.dump({"lower_case": vocab.lower_case, "tokenizer": vocab.kind}, f)


def check_run_vocab(directory: str, vocab: RunVocab) -> None:
  """Stops when `directory` keeps another vocab or casing than `vocab` (none kept: fine).

  What a resumed run (`write_run_vocab`) and an export (training/serving/export_task.py)
  check the records' vocab with.

  Raises:
    UserError: naming both files and the difference.
  """
  saved = read_run_vocab(directory)
  reason = saved.disagreement(vocab) if saved is not None else None
  if reason:
    raise UserError(f"{directory} was trained with another vocab than this run's: {reason}")


def lost_run_vocab(directory: str) -> Optional[str]:
  """The vocab copy `directory` kept and lost, or None.

  `tokenization.json` is written after the copy (`write_run_vocab`), so a directory holding
  it without `vocab.txt` or `spiece.model` had the copy deleted.

  Returns:
    The missing file's path (DIR/vocab.txt, or DIR/spiece.model for a SentencePiece run).
  """
  settings_file = os.path.join(directory, TOKENIZATION_FILE)
  if read_run_vocab(directory) is not None or not tf.io.gfile.exists(settings_file):
    return None
  with tf.io.gfile.GFile(settings_file) as f:
    kind = json.load(f).get("tokenizer")
  name = SENTENCEPIECE_MODEL_FILE if kind == tokenization.SENTENCEPIECE else VOCAB_FILE
  return os.path.join(directory, name)


def _existing(path: str, relative_to: str) -> Optional[str]:
  """`path` if it exists, else the same name under `relative_to` if that exists."""
  for candidate in (path, os.path.join(relative_to, path)):
    if candidate and tf.io.gfile.exists(candidate):
      return candidate
  return None


def records_vocab(task) -> Optional[RunVocab]:
  """The vocab the task's training records were made with, or None when they do not say.

  The vocab is read (`tokenization.load_vocab`: a bad file stops here, before it is copied
  anywhere) and must fit the task's encoder (`check_vocab_fits`).

  Fine-tuning tasks: `task.meta_data`: the records' copy ("vocab_copy", in the data
  directory), else "vocab_file" (records written before they kept a copy; a relative path
  is also looked up in the data directory), and "lower_case". Pretraining tasks: the
  `metadata.json` next to the first training file (its "vocab_file", a copy next to it;
  older records: the job's settings).

  Raises:
    UserError: the vocab file is unreadable as a vocab, or has more entries than
      `task.encoder_config.vocab_size`.
  """
  vocab = _records_vocab(task)
  encoder_config = getattr(task, "encoder_config", None)
  if vocab is not None and encoder_config is not None:
    check_vocab_fits(vocab, encoder_config.vocab_size)
  return vocab


def check_vocab_fits(vocab: RunVocab, vocab_size: int) -> None:
  """Stops a run whose vocab has more entries than the encoder has word embeddings.

  An id at or past `vocab_size` has no row: the CPU's gather fails at the first step, a GPU's
  returns zeros and trains on. Fewer entries than `vocab_size` are fine (the table is padded,
  as Model Garden's are).

  Raises:
    UserError: naming both numbers, the file and the gin binding to change.
  """
  size = len(tokenization.load_vocab(vocab.vocab_file))
  if size > vocab_size:
    raise UserError(f"the vocab {vocab.vocab_file} has {size} entries but the encoder only "
                    f"{vocab_size} word embeddings (encoder_config.vocab_size = {vocab_size}): "
                    f"bind encoder_config.vocab_size = {size} (or more) in the gin config or "
                    "--gin_params")


def _records_vocab(task) -> Optional[RunVocab]:
  """`records_vocab` before its checks."""
  meta_data = getattr(task, "meta_data", None)
  if meta_data is not None:
    copy = meta_data.get("vocab_copy")  # the records' own copy, next to them
    found = (_existing(os.path.join(task.data.data_dir, copy), task.data.data_dir)
             if copy else None) or _existing(meta_data.get("vocab_file", ""),
                                            task.data.data_dir)
    if found is None:
      logging.warning("%s/meta_data.json names the vocab %r, which is not there: no vocab is "
                      "kept with the run", task.data.data_dir, meta_data.get("vocab_file"))
      return None
    return RunVocab(found, bool(meta_data["lower_case"]))
  pattern = getattr(getattr(task, "data", None), "train_file_pattern", "").split(",")[0]
  files = tf.io.gfile.glob(pattern) if pattern else []
  if not files:
    return None
  directory = os.path.dirname(sorted(files)[0])
  metadata_file = os.path.join(directory, PRETRAINING_METADATA_FILE)
  if not tf.io.gfile.exists(metadata_file):
    return None
  with tf.io.gfile.GFile(metadata_file) as f:
    metadata = json.load(f)
  settings = metadata.get("settings", {})
  if metadata.get("vocab_file"):  # the job's copy, next to the shards
    found = _existing(os.path.join(directory, metadata["vocab_file"]), directory)
  elif settings.get("vocab_file"):  # records of older jobs: the path the job was given
    found = _existing(settings["vocab_file"], directory)
  else:  # a metadata.json that names no vocab
    return None
  if found is None:
    logging.warning("%s names the vocab %r, which is not there: no vocab is kept with the run",
                    metadata_file, metadata.get("vocab_file") or settings.get("vocab_file"))
    return None
  return RunVocab(found, bool(metadata.get("lower_case", settings.get(
      "lower_case", tokenization.DEFAULT_LOWER_CASE))))


HF_CONFIG_FILE = "config.json"
HF_TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
HF_SENTENCEPIECE_FILE = "spm.model"


def read_transformers_vocab(directory: str) -> Optional[RunVocab]:
  """The vocab and casing of a transformers folder (config.json beside vocab.txt or
  spm.model), or None (not such a folder, or it holds no vocab).

  The casing is tokenizer_config.json's `do_lower_case`; a folder without it is taken as
  lower-casing, the default of transformers' BertTokenizer and ElectraTokenizer.

  Raises:
    UserError: tokenizer_config.json is not a JSON object.
  """
  if not tf.io.gfile.exists(os.path.join(directory, HF_CONFIG_FILE)):
    return None
  for name in (VOCAB_FILE, HF_SENTENCEPIECE_FILE):
    vocab_file = os.path.join(directory, name)
    if tf.io.gfile.exists(vocab_file):
      break
  else:
    return None
  settings_file = os.path.join(directory, HF_TOKENIZER_CONFIG_FILE)
  settings = {}
  if tf.io.gfile.exists(settings_file):
    try:
      with tf.io.gfile.GFile(settings_file) as f:
        settings = json.load(f)
    except ValueError as error:
      raise UserError(f"{settings_file} is not JSON ({error})") from None
    if not isinstance(settings, dict):
      raise UserError(f"{settings_file} is not a JSON object")
  return RunVocab(vocab_file, bool(settings.get("do_lower_case", True)))


def init_checkpoint_vocab(init_checkpoint: str) -> Optional[RunVocab]:
  """The vocab an init_checkpoint was trained with, or None when none is kept beside it.

  One of our runs (DIR/vocab.txt or spiece.model with tokenization.json), a transformers
  folder (`read_transformers_vocab`), or a bare vocab.txt beside a checkpoint (a
  google-research/electra TF1 checkpoint, as its releases ship it; casing not known).
  """
  is_prefix = tf.io.gfile.exists(init_checkpoint + ".index")
  directory = (os.path.dirname(init_checkpoint) if is_prefix or
               not tf.io.gfile.isdir(init_checkpoint) else init_checkpoint)
  found = read_run_vocab(directory) or read_transformers_vocab(directory)
  bare = os.path.join(directory, VOCAB_FILE)
  if found is None and tf.io.gfile.exists(bare):
    found = RunVocab(bare, None)
  return found


VOCAB_EXTENSION_BINDING = "TrainerConfig.vocab_extension_init"


def check_init_checkpoint_vocab(init_checkpoint: str, vocab: RunVocab, extension_init: str = ""
                                ) -> Optional[extension_warm_start.VocabExtension]:
  """Stops a warm start from a checkpoint that kept another vocab or casing than `vocab`,
  unless `vocab` extends its vocab and `extension_init` says how the new rows start.

  Args:
    init_checkpoint: TrainerConfig.init_checkpoint.
    vocab: the records' vocab.
    extension_init: TrainerConfig.vocab_extension_init ("": no extension declared).

  Returns:
    The extension to warm-start across, or None (the same vocab, or none kept there).

  Raises:
    UserError: naming the checkpoint, both files and the difference (and, for an
      undeclared extension, the bindings that declare it).
  """
  saved = init_checkpoint_vocab(init_checkpoint)
  if extension_init:
    if saved is None:
      raise UserError(f"{VOCAB_EXTENSION_BINDING}={extension_init!r}, but "
                      f"TrainerConfig.init_checkpoint={init_checkpoint} keeps no vocab to "
                      "extend (vocab.txt beside it)")
    reason = saved.normalisation_disagreement(vocab)
    if reason:
      raise UserError(f"TrainerConfig.init_checkpoint={init_checkpoint} was trained with "
                      f"another vocab than this run's records: {reason}")
    return extension_warm_start.plan_extension(saved.vocab_file, vocab.vocab_file,
                                               extension_init, init_checkpoint)
  reason = saved.disagreement(vocab) if saved is not None else None
  if reason:
    hint = ""
    if (saved.kind == tokenization.WORDPIECE and not saved.normalisation_disagreement(vocab)
        and not vocab_extension_error(saved, vocab)):
      hint = (f"; the records' vocab extends it: bind {VOCAB_EXTENSION_BINDING} = "
              f"'{extension_warm_start.MEAN_OF_PIECES}' (or '{extension_warm_start.RANDOM}') "
              "and encoder_config.vocab_size to warm-start across the extension")
    raise UserError(f"TrainerConfig.init_checkpoint={init_checkpoint} was trained with "
                    f"another vocab than this run's records: {reason}{hint}")
  return None


def vocab_extension_error(old: RunVocab, new: RunVocab) -> str:
  """data.vocab_extension.extension_error for two WordPiece RunVocabs."""
  return vocab_extension.extension_error(
      tokenization.load_vocab(old.vocab_file), tokenization.load_vocab(new.vocab_file),
      old.vocab_file, new.vocab_file)
