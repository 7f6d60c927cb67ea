"""The fine-tuned tagging export: a tag per word, from raw text or from words already split.

A word is what the tagging records call one: a CoNLL token or one entry of a JSON-lines
`tokens` list. Raw text is split into words as BERT's basic tokenizer splits text before
word pieces (training/serving/word_splitting.py): at whitespace of every kind, and around
every punctuation character and CJK ideograph ("Paris, France." -> "Paris", ",", "France",
"."), the way CoNLL files write their tokens, never inside a word at an invisible character
(a soft hyphen, a zero-width space). The split is made on the original text (no
lower-casing or accent stripping), so each word's offsets point into what was sent,
whatever it holds. Every word is then tokenized on its own into word pieces, as the
records' writer does (data/finetuning/tagging_features.py; a word the tokenizer drops
entirely becomes [UNK] there and here), and the tag is read at its first piece.

Signatures (S = the records' max_seq_length; a row holds at most S - 2 word pieces; a
batch is packed to its longest row plus [CLS] and [SEP], at most S, as transformers'
tokenizers pad with `padding=True`, or with `bucket_rows` sorted by length and run a few
rows at a time, each group packed to its own longest row, with the same outputs):
  `tag_text`(text: string [batch]), also served as `serving_default`, returns
    `words` string [batch, max_words] (the words found as sent, "" as padding),
    `tags` string [batch, max_words] ("" as padding), `tag_ids` int32 (-1 as padding),
    `scores` float32 [batch, max_words] (the tag's softmax probability, 0 as padding),
    `start`, `end` int32 [batch, max_words]: Unicode code-point (character) offsets of each
      word in its text, end exclusive (`text[start:end]` in Python is the word), -1 as
      padding,
    `byte_start`, `byte_end` int32: the same spans in UTF-8 bytes
      (`text.encode()[byte_start:byte_end]` is the word),
    `num_words` int32 [batch].
  `tag_words`(words: string [total_words], row_lengths: int32 [batch]) takes a ragged batch
    of words as its two components (`tf.RaggedTensor.from_row_lengths(words, row_lengths)`:
    row i is the next row_lengths[i] words) and returns `tags`, `tag_ids`, `scores` and
    `num_words` as `tag_text` does.

Both accept 0 rows (every output has 0 rows) and rows of no words (an empty or blank text:
num_words 0). They refuse, with an InvalidArgumentError that names the input and row, while
the server serves on:
  - a text or words input that is not a batch (rank 0, or 2-D): "text must be a batch of
    strings (rank 1, [batch]); got rank 2";
  - text or words that are not valid UTF-8: "text row 1 is not valid UTF-8";
  - a row longer than S - 2 pieces: "text row 0 has 28000 word pieces; this model tags at
    most 30 a row (max_seq_length 32 less [CLS] and [SEP]): split it into sentences". No
    windows are made, unlike the records (which split a long sentence into windows of whole
    words): a served row is one sentence, and a text that does not fit is sent as several;
  - in `tag_words`, an empty or blank word: "words: word 3 (row 1) is empty or blank: send
    words, not spaces";
    row_lengths that are negative or do not add up to the number of words (their sum
    taken in int64: lengths whose int32 sum wraps round are refused too).
A wrong dtype (numbers for text) is refused by the signature itself.
"""
from typing import Dict, Sequence

import tensorflow as tf

from modeling.models.finetuning_models import TokenClassificationModel
from training.serving.text_preprocessing import first_true
from training.serving.text_preprocessing import TextPreprocessor
from training.serving.word_splitting import split_words

# Any rank, so that a request of the wrong rank reaches the graph's own check and its message.
TEXT_SPEC = tf.TensorSpec(None, tf.string, name="text")
WORDS_SPECS = [tf.TensorSpec(None, tf.string, name="words"),
               tf.TensorSpec(None, tf.int32, name="row_lengths")]


def _assert(condition: tf.Tensor, *message) -> tf.Operation:
  """tf.debugging.Assert with a message joined from strings and int tensors."""
  parts = [part if isinstance(part, str) else tf.strings.as_string(part) for part in message]
  return tf.debugging.Assert(condition, [tf.strings.join(parts)])


def rank_one_check(values: tf.Tensor, name: str, what: str) -> tf.Operation:
  """Refuses a request input that is not rank 1."""
  rank = tf.rank(values)
  return _assert(tf.equal(rank, 1), f"{name} must be a batch of {what} (rank 1, [batch]); "
                 "got rank ", rank)


def utf8_check(strings: tf.Tensor, name: str, unit: str) -> tf.Operation:
  """Refuses string [n] holding invalid UTF-8, naming the first bad entry."""
  valid = tf.equal(tf.strings.unicode_transcode(strings, "UTF-8", "UTF-8", errors="replace",
                                                replace_control_characters=False), strings)
  first_bad = first_true(~valid)
  return _assert(tf.reduce_all(valid), f"{name} {unit} ", first_bad, " is not valid UTF-8")


class TaggingServingModule(tf.Module):
  """A TokenClassificationModel behind `tag_text` and `tag_words` (see the module docstring).

  Args:
    model: the fine-tuned TokenClassificationModel.
    labels: the tag of each label id (the records' `labels`).
    preprocessor: the TextPreprocessor of the records' vocab and max_seq_length.
    bucket_rows: 0 packs a batch to its longest row; N > 0 sorts it by length and runs the
      encoder N rows at a time, each group packed to its own longest row (the same outputs,
      less work on padding: ExportConfig.bucket_rows).
  """

  def __init__(self, model: TokenClassificationModel, labels: Sequence[str],
               preprocessor: TextPreprocessor, bucket_rows: int = 0):
    super().__init__(name="tagging_serving")
    if len(labels) != model.head.num_labels:
      raise ValueError(f"{len(labels)} labels for a head of {model.head.num_labels} outputs")
    self.encoder = model.encoder
    self.head = model.head
    self.preprocessor = preprocessor
    self.labels = tuple(labels)
    self.bucket_rows = bucket_rows

  def _word_pieces(self, words: tf.Tensor) -> tf.RaggedTensor:
    """string [n] words -> int32 RaggedTensor [n, (pieces)], each word tokenized alone; a
    word the tokenizer drops entirely is [UNK], as in the records."""
    pieces = tf.cast(self.preprocessor.tokenize(words), tf.int32)
    dropped = tf.cast(tf.equal(pieces.row_lengths(), 0), tf.int64)
    unknown = tf.RaggedTensor.from_row_lengths(
        tf.fill([tf.reduce_sum(dropped)], self.preprocessor.unk_id), dropped)
    return tf.concat([pieces, unknown], axis=1)

  def _logits(self, inputs: Dict[str, tf.Tensor]) -> tf.Tensor:
    """Encoder inputs, int32 [rows, L] -> float32 logits [rows, L, labels]."""
    return tf.cast(self.head(self.encoder(inputs, training=False)["sequence_output"],
                             training=False), tf.float32)

  def _tag(self, words: tf.RaggedTensor, name: str) -> Dict[str, tf.Tensor]:
    """Words, string RaggedTensor [batch, (words)] -> padded per-word outputs.

    Returns `tags`, `tag_ids`, `scores` [batch, max_words] and `num_words` [batch].
    """
    pieces = self._word_pieces(words.flat_values)  # [W, (pieces)]
    pieces_per_word = tf.cast(pieces.row_lengths(), tf.int32)  # [W]
    row_pieces = tf.RaggedTensor.from_row_splits(pieces.flat_values, tf.gather(
        pieces.row_splits, words.row_splits))  # [batch, (pieces)]
    checks = [self.preprocessor.row_length_check(row_pieces, name, "tags")]
    if name == "words":
      blank = tf.equal(tf.strings.length(tf.strings.strip(words.flat_values)), 0)
      first_blank = first_true(blank)
      checks.append(_assert(
          ~tf.reduce_any(blank), "words: word ", first_blank, " (row ",
          tf.gather(tf.concat([tf.cast(words.value_rowids(), tf.int64),
                               tf.zeros([1], tf.int64)], 0), first_blank),
          ") is empty or blank: send words, not spaces"))
    # Packed to the batch's longest row, not to S (or in length buckets, each group to its
    # own longest): the encoder's cost grows with the packed length, and the attention mask
    # keeps padding out of every piece's output.
    with tf.control_dependencies(checks):
      width = self.preprocessor.packed_length([row_pieces])  # L <= S
    if self.bucket_rows:
      def padded_logits(inputs):  # a group's [rows, L_group, labels] -> [rows, L, labels]
        logits = self._logits(inputs)
        return tf.pad(logits, [[0, 0], [0, width - tf.shape(logits)[1]], [0, 0]])
      logits = self.preprocessor.in_length_buckets([row_pieces], padded_logits,
                                                   self.bucket_rows)
    else:
      logits = self._logits(self.preprocessor.pack([row_pieces], width))
    # A word's first piece: 1 ([CLS]) + the pieces of the words before it in its row.
    before = tf.cumsum(pieces_per_word, exclusive=True)  # [W], over the whole batch
    row_start = tf.gather(tf.concat([before, [tf.reduce_sum(pieces_per_word)]], 0),
                          words.row_splits[:-1])  # [batch]
    rows = tf.cast(words.value_rowids(), tf.int32)
    positions = 1 + before - tf.gather(row_start, rows)
    probabilities = tf.nn.softmax(tf.gather_nd(logits, tf.stack([rows, positions], -1)))
    tag_ids = tf.argmax(probabilities, axis=-1, output_type=tf.int32)  # [W]
    ragged = lambda values: words.with_flat_values(values)  # pylint: disable=unnecessary-lambda
    return {"tags": ragged(tf.gather(tf.constant(self.labels), tag_ids)).to_tensor(""),
            "tag_ids": ragged(tag_ids).to_tensor(-1),
            "scores": ragged(tf.reduce_max(probabilities, -1)).to_tensor(0.0),
            "num_words": tf.cast(words.row_lengths(), tf.int32)}

  @tf.function(input_signature=[TEXT_SPEC])
  def tag_text(self, text):
    with tf.control_dependencies([rank_one_check(text, "text", "strings")]):
      text = tf.reshape(text, [-1])
    with tf.control_dependencies([utf8_check(text, "text", "row")]):
      words, byte_starts, byte_ends = split_words(text)
    outputs = self._tag(words, "text")
    rows = words.value_rowids()
    row_text = tf.gather(text, rows)
    starts, ends = (tf.cast(values.flat_values, tf.int32) for values in (byte_starts,
                                                                          byte_ends))
    prefix = tf.strings.substr(row_text, tf.zeros_like(starts), starts, unit="BYTE")
    char_starts = tf.strings.length(prefix, unit="UTF8_CHAR")
    char_ends = char_starts + tf.strings.length(words.flat_values, unit="UTF8_CHAR")
    padded = lambda values: words.with_flat_values(values).to_tensor(-1)
    outputs.update(words=words.to_tensor(""), start=padded(char_starts),
                   end=padded(char_ends), byte_start=padded(starts), byte_end=padded(ends))
    return outputs

  @tf.function(input_signature=WORDS_SPECS)
  def tag_words(self, words, row_lengths):
    with tf.control_dependencies([rank_one_check(words, "words", "words"),
                                  rank_one_check(row_lengths, "row_lengths", "counts")]):
      words, row_lengths = tf.reshape(words, [-1]), tf.reshape(row_lengths, [-1])
    total = tf.reduce_sum(tf.cast(row_lengths, tf.int64))  # int32 lengths can add past 2**31
    checks = [
        _assert(tf.reduce_all(row_lengths >= 0), "row_lengths must not be negative"),
        _assert(tf.equal(total, tf.size(words, out_type=tf.int64)), "row_lengths add up to ",
                total, " words but words holds ", tf.size(words)),
        utf8_check(words, "words", "word")]
    with tf.control_dependencies(checks):
      ragged = tf.RaggedTensor.from_row_lengths(words, tf.cast(row_lengths, tf.int64),
                                                validate=False)
    return self._tag(ragged, "words")

  def signatures(self):
    """The signatures this module serves."""
    return {"serving_default": self.tag_text, "tag_text": self.tag_text,
            "tag_words": self.tag_words}
