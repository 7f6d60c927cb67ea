"""The run's WordPiece tokenizer as HuggingFace tokenizers' `tokenizer.json`, for runtimes
without TensorFlow (the ONNX export: training/serving/export_onnx.py).

BERT's normalizer and pre-tokenizer (clean the text, split at whitespace and around
punctuation and CJK ideographs), after the steps that make them normalise as
tensorflow-text's tokenizer does (`normalizer`), and the vocab's WordPiece model give the ids
the library's tokenizer gives
(tests/training/serving/test_onnx_export.py compares them on the sample corpus and on hostile
strings). The post-processor packs `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]` with type ids 0
and 1; a batch is cut to S pieces (the longer text first, as the records cut a pair) and padded
with [PAD] to its longest row.
"""
from tokenizers import Regex
from tokenizers import Tokenizer
from tokenizers import models
from tokenizers import normalizers
from tokenizers import pre_tokenizers
from tokenizers import processors

from data.tokenization import CLS_TOKEN
from data.tokenization import load_vocab
from data.tokenization import PAD_TOKEN
from data.tokenization import SEP_TOKEN
from data.tokenization import UNK_TOKEN
from data.tokenization import WORD_CONTINUATION_PREFIX


# Control characters other than tab, newline and carriage return: tensorflow-text's
# tokenizer splits words at them, BERT's normalizer deletes them.
_CONTROL = Regex(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Format characters (zero-width space, soft hyphen, joiners, BOM): the cased tokenizer splits
# words at them; the uncased one deletes them, as BERT's normalizer does.
_FORMAT = Regex(r"[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u180e\u200b-\u200f"
                r"\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")


def normalizer(lower_case: bool) -> normalizers.Normalizer:
  """BERT's normalizer, preceded by what makes it match tensorflow-text's: control
  characters (and, cased, format characters) become spaces; uncased, the text is case-folded
  and decomposed by compatibility (NFKD: "ﬁ" is "fi", "ǅ" is "dz", "ß" is "ss") before the
  accents are stripped."""
  steps = [normalizers.Replace(_CONTROL, " ")]
  if lower_case:
    steps += [normalizers.Replace("ß", "ss"), normalizers.Replace("ẞ", "ss"),
              normalizers.Replace("ς", "σ"), normalizers.NFKD(), normalizers.Lowercase(),
              normalizers.StripAccents()]
  else:
    steps.append(normalizers.Replace(_FORMAT, " "))
  return normalizers.Sequence(steps + [normalizers.BertNormalizer(
      clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False)])


def wordpiece_tokenizer(vocab_file: str, lower_case: bool, seq_length: int) -> Tokenizer:
  """A `tokenizers.Tokenizer` over the WordPiece `vocab_file` (see the module docstring)."""
  ids = {token: index for index, token in enumerate(load_vocab(vocab_file))}
  tokenizer = Tokenizer(models.WordPiece(ids, unk_token=UNK_TOKEN,
                                         continuing_subword_prefix=WORD_CONTINUATION_PREFIX))
  tokenizer.normalizer = normalizer(lower_case)
  tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
  tokenizer.post_processor = processors.TemplateProcessing(
      single=f"{CLS_TOKEN} $A {SEP_TOKEN}",
      pair=f"{CLS_TOKEN} $A {SEP_TOKEN} $B:1 {SEP_TOKEN}:1",
      special_tokens=[(CLS_TOKEN, ids[CLS_TOKEN]), (SEP_TOKEN, ids[SEP_TOKEN])])
  tokenizer.enable_truncation(seq_length, strategy="longest_first")
  tokenizer.enable_padding(pad_id=ids[PAD_TOKEN], pad_token=PAD_TOKEN)
  return tokenizer
