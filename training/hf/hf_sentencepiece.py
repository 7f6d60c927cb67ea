"""A transformers tokenizer for a SentencePiece model: spm.model, tokenizer.json and configs.

`AutoTokenizer.from_pretrained` on the folder loads `DebertaV2TokenizerFast` from
tokenizer.json (no conversion, which needs a protobuf runtime matching sentencepiece's
generated code) and `use_fast=False` loads `DebertaV2Tokenizer` from spm.model; both give our
ids: [CLS] a [SEP] (b [SEP]), with token type 1 for b. tokenizer.json is what transformers'
own SpmConverter would build (its normaliser: the model's precompiled NFKC (+ case folding)
map, then right strip and runs of spaces to one; Metaspace word starts; a Unigram model with
the pieces' scores, or a BPE model whose merges are ordered by the merged piece's id). The
one difference from our tokenizer: "[MASK]" (any special token) written in the text is that
special token for transformers, plain text for us.
"""
import json
from typing import Dict, Iterator, List, Tuple

import sentencepiece as spm
from tokenizers import Regex
from tokenizers import Tokenizer
from tokenizers import decoders
from tokenizers import models
from tokenizers import normalizers
from tokenizers import pre_tokenizers
from tokenizers import processors

from data import tokenization

MODEL_FILE = "spm.model"  # DebertaV2Tokenizer's vocab file name
_WORD_START = tokenization.SENTENCEPIECE_WORD_START
# sentencepiece_model.proto field numbers.
_NORMALIZER_SPEC, _PRECOMPILED_CHARSMAP, _TRAINER_SPEC, _MODEL_TYPE = 3, 2, 2, 3
_BPE = 2  # TrainerSpec.ModelType


def _fields(data: bytes) -> Iterator[Tuple[int, object]]:
  """(field number, value) of a serialised protobuf message: varints as ints, length-delimited
  fields as bytes. (sentencepiece's generated module needs a newer protobuf than TF's.)"""
  position = 0

  def varint():
    nonlocal position
    value, shift = 0, 0
    while True:
      byte = data[position]
      position += 1
      value |= (byte & 0x7F) << shift
      shift += 7
      if byte < 0x80:
        return value

  while position < len(data):
    key = varint()
    number, wire_type = key >> 3, key & 7
    if wire_type == 0:
      yield number, varint()
    elif wire_type == 2:
      length = varint()
      yield number, data[position:position + length]
      position += length
    elif wire_type == 5:
      position += 4
    elif wire_type == 1:
      position += 8
    else:
      raise ValueError(f"unexpected protobuf wire type {wire_type}")


def _field(data: bytes, number: int, default=None):
  return next((value for field, value in _fields(data) if field == number), default)


def _bpe_merges(pieces: List[str]) -> List[Tuple[str, str]]:
  """Every split of a piece into two pieces, ordered by the merged piece's id (then the
  parts'), as transformers' SentencePieceExtractor orders them."""
  ids = {piece: index for index, piece in enumerate(pieces)}
  merges = []
  for merged, merged_id in ids.items():
    for cut in range(1, len(merged)):
      left, right = merged[:cut], merged[cut:]
      if left in ids and right in ids:
        merges.append((merged_id, ids[left], ids[right], left, right))
  return [(left, right) for *_, left, right in sorted(merges)]


def tokenizer_json(model: bytes) -> str:
  """The tokenizer.json of a SentencePiece model from `data.build_vocab`."""
  processor = spm.SentencePieceProcessor(model_proto=model)
  pieces = [processor.id_to_piece(i) for i in range(processor.get_piece_size())]
  pad, unk, cls, sep, mask = tokenization.SPECIAL_TOKENS
  is_bpe = _field(_field(model, _TRAINER_SPEC, b""), _MODEL_TYPE, 1) == _BPE
  if is_bpe:
    tokenizer = Tokenizer(models.BPE({piece: i for i, piece in enumerate(pieces)},
                                     _bpe_merges(pieces), unk_token=unk, fuse_unk=True))
  else:
    tokenizer = Tokenizer(models.Unigram(
        [(piece, processor.get_score(i)) for i, piece in enumerate(pieces)],
        unk_id=processor.unk_id()))
  charsmap = _field(_field(model, _NORMALIZER_SPEC, b""), _PRECOMPILED_CHARSMAP, b"")
  steps = [normalizers.Strip(left=False, right=True),
           normalizers.Replace(Regex(" {2,}"), _WORD_START)]
  tokenizer.normalizer = normalizers.Sequence(
      ([normalizers.Precompiled(charsmap)] if charsmap else []) + steps)
  tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_WORD_START,
                                                     prepend_scheme="always")
  tokenizer.decoder = decoders.Metaspace(replacement=_WORD_START, prepend_scheme="always")
  ids = {token: pieces.index(token) for token in (cls, sep)}
  tokenizer.post_processor = processors.TemplateProcessing(
      single=f"{cls}:0 $A:0 {sep}:0", pair=f"{cls}:0 $A:0 {sep}:0 $B:1 {sep}:1",
      special_tokens=list(ids.items()))
  tokenizer.add_special_tokens(list(tokenization.SPECIAL_TOKENS))
  return tokenizer.to_str()


def tokenizer_files(model: bytes, max_length: int) -> Dict[str, str]:
  """File name -> text of the JSON files beside spm.model."""
  pad, unk, cls, sep, mask = tokenization.SPECIAL_TOKENS
  special = dict(pad_token=pad, unk_token=unk, cls_token=cls, sep_token=sep, mask_token=mask,
                 bos_token=cls, eos_token=sep)
  config = dict(special, tokenizer_class="DebertaV2Tokenizer", do_lower_case=False,
                split_by_punct=False, model_max_length=max_length)
  dump = lambda content: json.dumps(content, indent=2, sort_keys=True) + "\n"
  return {"tokenizer.json": tokenizer_json(model), "tokenizer_config.json": dump(config),
          "special_tokens_map.json": dump(special)}
