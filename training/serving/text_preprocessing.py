"""Raw text -> packed encoder inputs, in-graph, for SavedModels that take strings.

The tokenizer is the pretraining one (`data.tokenization.make_tokenizer(...).tf_tokenizer`:
tensorflow-text's FastBertTokenizer, whose vocab is compiled into the graph, or its
SentencepieceTokenizer, whose model is saved with the graph), and packing is
Model Garden's `BertPackInputs.bert_pack_inputs` with the round-robin trimmer, which gives
exactly what `data/finetuning/glue_features.py` writes: `[CLS] a [SEP] (b [SEP])`, zero-padded, the
longer text cut first when a pair does not fit (a single text keeps its first
`seq_length - 2` pieces). The vocab file is also kept as a SavedModel asset
(`<export>/assets/<vocab file name>`), so a served model carries its own vocab.

A pair's two batches must have the same number of rows: Model Garden's packing reads past
the shorter one, which aborts or crashes the serving process or answers fewer rows.
`pair_rows_check` refuses such a request in-graph with an InvalidArgumentError naming both
inputs before any packing op runs; every pair packing (here and SQuAD's) runs under it.

A text input must be a batch, string [batch]. A loaded signature does not check the rank
of what it is sent, and tensorflow-text's tokenizers read a scalar past its end (the
serving process dies, SIGSEGV) and a [batch, n] batch as its first column. `text_batch`
refuses both in-graph (tf.ensure_shape: an InvalidArgumentError "Shape of tensor text [] is
not compatible with expected shape [?]", naming the input) before any tokenizer op runs;
`TextPreprocessor.tokenize` runs it, so every text signature does. (A rank check through
tf.rank or tf.debugging.assert_rank would not do: the input's static shape is [None], so
both are decided when the graph is traced, and the request's rank is never looked at.)
"""
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import tensorflow as tf
from official.nlp.modeling.layers.text_layers import BertPackInputs

from data.tokenization import make_tokenizer


PAIR_NAMES = ("text_a", "text_b")


def text_batch(texts: tf.Tensor) -> tf.Tensor:
  """`texts`, string [batch], or an InvalidArgumentError when a request sends another rank.

  Feed only the returned tensor to the ops that read the texts: the check runs before them.
  """
  return tf.ensure_shape(texts, [None])


def first_true(mask: tf.Tensor) -> tf.Tensor:
  """The index of the first True of a bool [n] (0 when none), int64 scalar: the row a
  refusal names."""
  return tf.concat([tf.where(mask)[:, 0], tf.zeros([1], tf.int64)], 0)[0]


def pair_rows_check(segments: Sequence[Union[tf.Tensor, tf.RaggedTensor]],
                    names: Tuple[str, str] = PAIR_NAMES) -> List[tf.Operation]:
  """Control dependencies that refuse a pair whose two batches differ in rows.

  Run the packing under `tf.control_dependencies(pair_rows_check(...))`: a mismatched
  request then raises tf.errors.InvalidArgumentError, e.g. "text_a has 3 rows and text_b
  has 1: a pair request needs one text_b per text_a", and no packing op runs.

  Args:
    segments: one or two batches (string [batch] or RaggedTensors [batch, ...]).
    names: what the request calls the two batches, for the message.

  Returns:
    The assertion, or [] for a single segment.
  """
  if len(segments) < 2:
    return []
  first, second = (tf.cast(segment.nrows() if isinstance(segment, tf.RaggedTensor)
                           else tf.shape(segment)[0], tf.int64) for segment in segments)
  message = tf.strings.join([
      f"{names[0]} has ", tf.strings.as_string(first), tf.where(first == 1, " row", " rows"),
      f" and {names[1]} has ", tf.strings.as_string(second),
      f": a pair request needs one {names[1]} per {names[0]}"])
  return [tf.debugging.Assert(tf.equal(first, second), [message])]


class TextPreprocessor(tf.Module):
  """Tokenizes and packs raw UTF-8 strings into `input_word_ids`/`input_mask`/`input_type_ids`.

  Args:
    vocab_file: the WordPiece vocab or SentencePiece model the encoder was pretrained with.
    lower_case: lower-case (and strip accents) as in pretraining (WordPiece; a SentencePiece
      model normalises as it was trained).
    seq_length: S, the packed length (at most the encoder's max_sequence_length).

  Attributes:
    vocab_file: the vocab as a tf.saved_model.Asset.
    tokenizer: the tensorflow-text tokenizer (a tf.Module, saved with the model).
    seq_length, cls_id, sep_id, pad_id, unk_id: python ints.
  """

  def __init__(self, vocab_file: str, lower_case: bool, seq_length: int):
    super().__init__(name="text_preprocessor")
    pretraining = make_tokenizer(vocab_file, lower_case=lower_case)
    self.vocab_size = pretraining.vocab_size
    self.vocab_file = tf.saved_model.Asset(vocab_file)
    self.tokenizer = pretraining.tf_tokenizer
    self.seq_length = seq_length
    self.cls_id, self.sep_id = pretraining.cls_id, pretraining.sep_id
    self.pad_id = pretraining.pad_id
    self.unk_id = pretraining.unk_id

  def tokenize(self, texts: tf.Tensor) -> tf.RaggedTensor:
    """tf.string [batch] -> word-piece ids, int32 RaggedTensor [batch, (pieces)].

    Another rank than [batch] raises tf.errors.InvalidArgumentError (`text_batch`).
    """
    pieces = self.tokenizer.tokenize(text_batch(texts))
    if pieces.ragged_rank == 2:  # a BertTokenizer's [batch, (words), (pieces)]
      pieces = pieces.merge_dims(-2, -1)
    return pieces

  def row_length_check(self, pieces: tf.RaggedTensor, name: str, verb: str) -> tf.Operation:
    """Refuses a request row of more than S - 2 pieces (a signature that reads each text
    whole, and would otherwise read its first pieces alone).

    Args:
      pieces: RaggedTensor [batch, (pieces)].
      name: the request input, for the message ("text").
      verb: what the model does with a row ("tags", "scores").

    Returns:
      An assertion: "text row 0 has 40 word pieces; this model scores at most 30 a row
      (max_seq_length 32 less [CLS] and [SEP]): split it into sentences".
    """
    per_row = tf.cast(pieces.row_lengths(), tf.int32)
    capacity = self.seq_length - 2
    too_long = per_row > capacity
    first = first_true(too_long)
    message = tf.strings.join([
        f"{name} row ", tf.strings.as_string(first), " has ",
        tf.strings.as_string(tf.gather(tf.concat([per_row, [0]], 0), first)),
        f" word pieces; this model {verb} at most {capacity} a row (max_seq_length "
        f"{self.seq_length} less [CLS] and [SEP]): split it into sentences"])
    return tf.debugging.Assert(~tf.reduce_any(too_long), [message])

  def pack_whole(self, texts: tf.Tensor, verb: str) -> Dict[str, tf.Tensor]:
    """tf.string [batch] -> int32 [batch, S] encoder inputs, each text whole: a text of more
    than S - 2 pieces raises tf.errors.InvalidArgumentError naming its row
    (`row_length_check`; `verb` says what the model does with a row, "scores")."""
    pieces = self.tokenize(texts)
    with tf.control_dependencies([self.row_length_check(pieces, "text", verb)]):
      return self.pack([pieces])

  def pack(self, segments: Sequence[tf.RaggedTensor],
           seq_length: Optional[Union[int, tf.Tensor]] = None) -> Dict[str, tf.Tensor]:
    """One or two int32 RaggedTensors [batch, (pieces)] -> int32 [batch, S] encoder inputs.

    `seq_length` overrides S (a python int or an int32 scalar tensor). Two segments of
    different row counts raise tf.errors.InvalidArgumentError (`pair_rows_check`).
    """
    with tf.control_dependencies(pair_rows_check(segments)):
      packed = BertPackInputs.bert_pack_inputs(
          list(segments), self.seq_length if seq_length is None else seq_length,
          start_of_sequence_id=self.cls_id,
          end_of_segment_id=self.sep_id, padding_id=self.pad_id, truncator="round_robin")
    return {name: tf.cast(value, tf.int32) for name, value in packed.items()}

  def packed_length(self, segments: Sequence[tf.RaggedTensor]) -> tf.Tensor:
    """The length a batch of one or two segments needs: its longest row's pieces plus
    [CLS] and the [SEP]s, at most S (int32 scalar). Packed to it rather than to S, a batch
    of short texts runs the encoder on fewer padding positions and gives the same outputs."""
    total = tf.add_n([tf.cast(segment.row_lengths(), tf.int32) for segment in segments])
    longest = tf.reduce_max(tf.concat([total, [0]], 0)) + 1 + len(segments)
    return tf.minimum(longest, self.seq_length)

  def pack_to_longest(self, *texts: tf.Tensor) -> Dict[str, tf.Tensor]:
    """As `__call__`, packed to the batch's `packed_length` instead of S: int32
    [batch, L <= S]."""
    segments = [self.tokenize(text) for text in texts]
    with tf.control_dependencies(pair_rows_check(segments)):  # before adding a pair's rows
      length = self.packed_length(segments)
    return self.pack(segments, length)

  def in_length_buckets(self, segments: Sequence[tf.RaggedTensor],
                        outputs_of: Callable[[Dict[str, tf.Tensor]], tf.Tensor],
                        bucket_rows: int) -> tf.Tensor:
    """`outputs_of` (encoder inputs -> float32 [rows, ...]) over one or two batches of word
    pieces (`tokenize`'s RaggedTensors [batch, (pieces)]), run `bucket_rows` rows at a time
    in order of length, each group packed to its own longest row: [batch, ...] in the
    request's order. The rows' outputs are those of `outputs_of` on the batch packed whole
    (`packed_length`; a row's outputs do not depend on the padding beyond it), with less
    encoder work on padding when a batch mixes lengths. Outputs per position must come
    back at one length for every group (padded by `outputs_of`), as the groups are joined."""
    with tf.control_dependencies(pair_rows_check(segments)):  # before adding a pair's rows
      total = tf.add_n([tf.cast(segment.row_lengths(), tf.int32) for segment in segments])
    rows = tf.size(total)

    def bucketed():
      order = tf.argsort(total, stable=True)
      groups = (rows + bucket_rows - 1) // bucket_rows

      def run_group(group, results):
        chosen = order[group * bucket_rows:(group + 1) * bucket_rows]
        chunk = [tf.gather(segment, chosen) for segment in segments]
        return group + 1, results.write(group, outputs_of(self.pack(
            chunk, self.packed_length(chunk))))
      _, results = tf.while_loop(
          lambda group, _: group < groups, run_group,
          [tf.constant(0), tf.TensorArray(tf.float32, size=groups, infer_shape=False)])
      return tf.gather(results.concat(), tf.math.invert_permutation(order))
    # A batch of one bucket or less (0 rows included: the outputs' shape) runs whole, as
    # its one group would, without the loop's cost.
    return tf.cond(rows > bucket_rows, bucketed,
                   lambda: outputs_of(self.pack(segments, self.packed_length(segments))))

  def __call__(self, *texts: tf.Tensor) -> Dict[str, tf.Tensor]:
    """One or two tf.string [batch] text fields -> dict of int32 [batch, S] encoder inputs."""
    return self.pack([self.tokenize(text) for text in texts])
