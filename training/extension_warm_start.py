"""Warm starts across a vocab extension: the old ids' rows copied, the new pieces' rows
started from the old rows of their pieces.

A run whose records use an extended vocab (`python -m data.extend_vocab`: the checkpoint's
vocab, then appended pieces) warm-starts from the checkpoint when it says how the new rows
start, `TrainerConfig.vocab_extension_init`:

- "mean_of_pieces": a new piece's row is the mean of the old rows of the pieces the old vocab
  splits it into (data/vocab_extension.py: "##ology" -> "##olo" "##gy"), in every table tied
  to the vocab. The choice of Sachidananda et al. 2021 ("Efficient Domain Adaptation of
  Language Models via Adaptive Tokenization", SustaiNLP: new tokens start as the mean of
  their subword embeddings) and Gee et al. 2022 ("Fast Vocabulary Transfer for Language
  Model Compression", EMNLP industry track), from whom the name of the row rule is taken.
- "random": the new rows keep the fresh model's initialisation (the word tables' truncated
  normal, the output biases' zeros), as transformers' TF classes' `resize_token_embeddings`
  does (its PyTorch classes since 4.46 draw them from the old rows' mean and covariance).

The tables tied to the vocab are every weight whose first axis is the vocab: the word
embeddings (the encoder's, a generator's own, GDES's E_delta) and the masked-LM heads'
output biases (BERT's, ELECTRA's generator, TEAMS', Electric's cloze head): `is_vocab_table`.
tests/training/test_extension_warm_start.py checks that these are all such weights of every
registered objective. Rows past the extended vocab (a table padded beyond it) keep the
fresh initialisation; the old table's rows past the old vocab are not used.
"""
import dataclasses
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import tensorflow as tf

from data import tokenization
from data import vocab_extension
from data.user_error import UserError

MEAN_OF_PIECES = "mean_of_pieces"
RANDOM = "random"
ROW_INITS = (MEAN_OF_PIECES, RANDOM)

# Checkpoint keys (ours) and transformers names of the weights whose first axis is the vocab.
_OUR_VOCAB_TABLE = re.compile(
    r"^model/.*(word_embeddings/embeddings|word_embedding_delta|/output_bias)"
    r"/\.ATTRIBUTES/VARIABLE_VALUE$")
_HF_VOCAB_TABLE = re.compile(
    r"(word_embeddings\.weight|lm_head\.bias|predictions\.bias|decoder\.bias)$")
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def is_vocab_table(name: str) -> bool:
  """Whether checkpoint key or transformers name `name` is a weight with a row per vocab id."""
  return bool(_OUR_VOCAB_TABLE.match(name) or _HF_VOCAB_TABLE.search(name))


@dataclasses.dataclass(frozen=True)
class VocabExtension:
  """An extended vocab over a checkpoint's, and how its new rows start.

  Attributes:
    old_file: the checkpoint's vocab.
    new_file: the run's (the records') vocab: old_file's pieces, then new ones.
    old_size: pieces in old_file (ids 0 ... old_size - 1 are the same in both).
    new_size: pieces in new_file.
    row_init: MEAN_OF_PIECES or RANDOM.
    sources: for each new id, the old ids it splits into (MEAN_OF_PIECES).
  """
  old_file: str
  new_file: str
  old_size: int
  new_size: int
  row_init: str
  sources: Tuple[Tuple[int, ...], ...]

  def extended(self, old: np.ndarray, fresh: np.ndarray, name: str, source: str
               ) -> np.ndarray:
    """A table of the new model: `fresh` (the new model's value, float32 [rows, ...]) with
    the old ids' rows of `old` (the checkpoint's [old rows, ...]) and the new ids' rows
    started as `row_init` says.

    Raises:
      UserError: the tables' other axes differ, or `old` has fewer rows than the old vocab
        (naming `name` and `source`).
    """
    old, fresh = np.asarray(old, np.float32), np.asarray(fresh, np.float32)
    if old.shape[1:] != fresh.shape[1:] or old.shape[0] < self.old_size:
      raise UserError(f"{source}: {name} has shape {list(old.shape)} there, {list(fresh.shape)} "
                      f"here: a table over the vocab {self.old_file} ({self.old_size} pieces) "
                      f"extends to one of {self.new_size} rows or more, its other axes kept")
    table = fresh.copy()
    table[:self.old_size] = old[:self.old_size]
    if self.row_init == MEAN_OF_PIECES:
      table[self.old_size:self.new_size] = np.stack(
          [old[list(ids)].mean(axis=0) for ids in self.sources])
    return table

  def describe(self, tables: Sequence[str]) -> str:
    """The line a warm start prints: rows copied and rows started, and how."""
    how = ("as the mean of the old rows of the pieces the old vocab splits each into"
           if self.row_init == MEAN_OF_PIECES else "at random (the fresh initialisation)")
    return (f"  vocab extension ({self.old_file} -> {self.new_file}): in {len(tables)} "
            f"table(s) ({', '.join(_short(name) for name in tables)}), the rows of the "
            f"{self.old_size} old ids copied, the {self.new_size - self.old_size} new ids' "
            f"rows started {how}")


def _short(name: str) -> str:
  return name.replace("/.ATTRIBUTES/VARIABLE_VALUE", "")


def plan_extension(old_file: str, new_file: str, row_init: str, where: str
                   ) -> Optional[VocabExtension]:
  """The extension from `old_file` to `new_file`, or None when they hold the same pieces.

  Args:
    old_file: the init_checkpoint's vocab.
    new_file: the run's.
    row_init: TrainerConfig.vocab_extension_init.
    where: the init_checkpoint, for messages.

  Raises:
    UserError: an unknown `row_init`, a SentencePiece vocab, or `new_file` does not extend
      `old_file` (one line naming both files and the first difference).
  """
  if row_init not in ROW_INITS:
    raise UserError(f"TrainerConfig.vocab_extension_init={row_init!r}: expected one of "
                    f"{', '.join(map(repr, ROW_INITS))} (or '' for no extension)")
  for path in (old_file, new_file):
    if tokenization.tokenizer_kind(path) != tokenization.WORDPIECE:
      raise UserError(f"TrainerConfig.vocab_extension_init: {path} is a SentencePiece model; "
                      "only WordPiece vocabs are extended (data/extend_vocab.py says why)")
  old_tokens = tokenization.load_vocab(old_file)
  new_tokens = tokenization.load_vocab(new_file)
  error = vocab_extension.extension_error(old_tokens, new_tokens, old_file, new_file)
  if error:
    raise UserError(f"TrainerConfig.vocab_extension_init={row_init!r} warm-starts from "
                    f"{where} across a vocab extension, but {error}")
  if len(new_tokens) == len(old_tokens):
    return None
  return VocabExtension(old_file, new_file, len(old_tokens), len(new_tokens), row_init,
                        tuple(map(tuple, vocab_extension.piece_sources(old_tokens,
                                                                       new_tokens))))


def extended_checkpoint(model, checkpoint_path: str, scratch_dir: str,
                        extension: VocabExtension) -> Tuple[str, List[str]]:
  """A copy of one of our checkpoints' model weights with its vocab tables extended.

  Args:
    model: the built model of the extended vocab (its fresh values start what is not copied).
    checkpoint_path: the checkpoint prefix.
    scratch_dir: where the copy goes (the caller deletes it).
    extension: the extension.

  Returns:
    (the copy's prefix, the checkpoint keys of the tables extended). Tables the model has
    no place for are copied as they are (a warm start leaves them unused).
  """
  reader = tf.compat.v1.train.NewCheckpointReader(checkpoint_path)
  fresh = tf.compat.v1.train.NewCheckpointReader(
      tf.train.Checkpoint(model=model).write(os.path.join(scratch_dir, "fresh")))
  fresh_keys = set(fresh.get_variable_to_shape_map())
  names, values, extended = [], [], []
  for name in sorted(reader.get_variable_to_shape_map()):
    if not (name.startswith("model/") or name == _OBJECT_GRAPH_KEY) or ".OPTIMIZER_SLOT" in name:
      continue
    value = reader.get_tensor(name)
    if is_vocab_table(name) and name in fresh_keys:
      value = extension.extended(value, fresh.get_tensor(name), _short(name), checkpoint_path)
      extended.append(name)
    names.append(name)
    values.append(tf.constant(value))
  prefix = os.path.join(scratch_dir, "extended")
  tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                    tensors=values)
  return prefix, extended


def extend_hf_weights(state: Dict[str, np.ndarray], slots: Sequence, extension: VocabExtension,
                      source: str) -> Tuple[Dict[str, np.ndarray], List[str]]:
  """A transformers state dict with the vocab tables of `slots` (the weights about to be
  loaded, training/hf/hf_layout.WeightSlot) extended.

  Returns:
    (the state dict, the names extended).
  """
  state, extended = dict(state), []
  for slot in slots:
    if is_vocab_table(slot.name) and slot.name in state:
      state[slot.name] = extension.extended(state[slot.name], slot.to_hf(), slot.name, source)
      extended.append(slot.name)
  return state, extended
