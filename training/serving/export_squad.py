"""The fine-tuned SQuAD export: `serve_text`(question, context) -> the answer, in-graph.

One window per question: `[CLS] question [SEP] context [SEP]` with the question cut to
max_query_length pieces and the context to the pieces that fit in S (the records'
max_seq_length); an answer beyond the window is not found (split long contexts before
serving, or serve with a larger S). Answer extraction follows tasks/squad_postprocess.py:
among the head's beam (start, end) pairs, both in the context, end >= start and at most
max_answer_length pieces, the one with the highest log P(start) + log P(end | start).

Offsets: tensorflow-text's FastBertTokenizer reports each piece's byte span in the
*original* UTF-8 string (before lower-casing and accent stripping), so the answer is the
exact original substring, accents and case kept. `answer_start`/`answer_end` are Unicode
code-point (character) offsets, end exclusive (`context[start:end]` in Python, as SQuAD's
`answer_start`); `answer_byte_start`/`answer_byte_end` are the same span in UTF-8 bytes.

Signature `serve_examples`(inputs: string [batch]) takes serialized windows as in the
fine-tuning records (`input_ids`, `input_mask`, `segment_ids`, `paragraph_mask` int64 [S];
the rest ignored) and returns the head's beam, what tasks/squad_postprocess.py turns into
answers: `start_top_log_probs`, `start_top_index` [batch, k], `end_top_log_probs`,
`end_top_index` [batch, k, k] (float32, int32), v2.0 also `answerability_logits` [batch].

Signature `serve_text`(question, context: string [batch]), also served as `serving_default`,
returns
  `answer_text` string [batch] ("" when no valid span or, v2.0, judged unanswerable),
  `answer_start`, `answer_end`, `answer_byte_start`, `answer_byte_end` int32 [batch]
    (-1 when the answer is ""),
  `score` float32 [batch]: log P(start) + log P(end | start) of the best span (-inf: none),
  v2.0 also `no_answer_log_odds` float32 [batch] (the answerability logit) and
    `answerable` bool [batch] (log-odds <= the task's null_threshold, 0 when untuned).
A question batch and a context batch of different row counts get an InvalidArgumentError
naming both (text_preprocessing.pair_rows_check), a question or context that is not a
batch (a scalar, a [batch, n] batch) one naming the input (text_preprocessing.text_batch),
and the server serves on.
"""
from typing import Optional

import tensorflow as tf
import tensorflow_text as tf_text

from modeling.models.finetuning_models import QuestionAnsweringModel
from tasks.squad_postprocess import BEAM_OUTPUTS
from training.serving.export import checked_ids
from training.serving.export import EXAMPLES_SIGNATURE
from training.serving.export import FINETUNING_FEATURE_NAMES
from training.serving.export import parse_encoder_inputs
from training.serving.export import text_spec
from training.serving.text_preprocessing import TextPreprocessor
from training.serving.text_preprocessing import pair_rows_check
from training.serving.text_preprocessing import text_batch


class SquadServingModule(tf.Module):
  """A QuestionAnsweringModel's encoder and span head behind `serve_text`.

  Args:
    model: the fine-tuned QuestionAnsweringModel.
    preprocessor: TextPreprocessor of the records' vocab and max_seq_length (with a
      FastBertTokenizer: lower_case == strip_accents, needed for offsets).
    max_query_length: questions are cut to this many pieces (as in the records).
    max_answer_length: longest answer in pieces.
    null_threshold: v2.0: unanswerable when the no-answer log-odds exceed it (None: 0).

  Raises:
    ValueError: the tokenizer cannot report offsets.
  """

  def __init__(self, model: QuestionAnsweringModel, preprocessor: TextPreprocessor,
               max_query_length: int, max_answer_length: int,
               null_threshold: Optional[float] = None):
    super().__init__(name="squad_serving")
    if not isinstance(preprocessor.tokenizer,
                      (tf_text.FastBertTokenizer, tf_text.SentencepieceTokenizer)):
      raise ValueError("SQuAD export needs a SentencePiece model or a FastBertTokenizer "
                       "(lower_case == strip_accents) for character offsets")
    self.encoder = model.encoder
    self.head = model.head
    self.preprocessor = preprocessor
    self.max_query_length = max_query_length
    self.max_answer_length = max_answer_length
    self.version_2 = model.head.with_answerability
    self.null_threshold = 0.0 if null_threshold is None else float(null_threshold)

  def _pack(self, question, context):
    """Window inputs, the context's first position and length, its pieces' byte spans.

    A question batch and a context batch of different row counts raise
    tf.errors.InvalidArgumentError naming both before the trimmer (whose own error, "Shapes
    of all inputs must match", names neither).
    """
    p = self.preprocessor
    question_ids = p.tokenize(question)[:, :self.max_query_length]
    context_ids, byte_starts, byte_ends = p.tokenizer.tokenize_with_offsets(context)
    with tf.control_dependencies(pair_rows_check([question, context], ("question", "context"))):
      question_ids, context_ids = tf_text.WaterfallTrimmer(p.seq_length - 3).trim(
          [question_ids, context_ids])
    ids, type_ids = tf_text.combine_segments([question_ids, context_ids], p.cls_id, p.sep_id)
    input_word_ids, input_mask = tf_text.pad_model_inputs(ids, p.seq_length, pad_value=p.pad_id)
    input_type_ids, _ = tf_text.pad_model_inputs(type_ids, p.seq_length)
    inputs = {name: tf.ensure_shape(tf.cast(value, tf.int32), [None, p.seq_length])
              for name, value in (("input_word_ids", input_word_ids),
                                  ("input_mask", input_mask),
                                  ("input_type_ids", input_type_ids))}
    context_start = tf.cast(question_ids.row_lengths(), tf.int32) + 2
    context_length = tf.cast(context_ids.row_lengths(), tf.int32)
    # [batch, S]: at least one column, so an empty context still gathers (then masks).
    dense = lambda offsets: offsets.to_tensor(-1, shape=[None, p.seq_length])
    return inputs, context_start, context_length, dense(byte_starts), dense(byte_ends)

  @tf.function(input_signature=EXAMPLES_SIGNATURE)
  def serve_examples(self, inputs):
    parsed = parse_encoder_inputs(inputs, self.preprocessor.seq_length,
                                  FINETUNING_FEATURE_NAMES, ["paragraph_mask"])
    paragraph_mask = parsed.pop("paragraph_mask")
    sequence_output = self.encoder(checked_ids(self.encoder, parsed),
                                   training=False)["sequence_output"]
    beam = self.head(sequence_output, paragraph_mask, training=False)
    names = BEAM_OUTPUTS + (("answerability_logits",) if self.version_2 else ())
    return {name: beam[name] for name in names}

  @tf.function(input_signature=[text_spec("question"), text_spec("context")])
  def serve_text(self, question, context):
    question, context = text_batch(question), text_batch(context)  # before any reader
    inputs, context_start, context_length, byte_starts, byte_ends = self._pack(question,
                                                                              context)
    positions = tf.range(self.preprocessor.seq_length)[tf.newaxis, :]
    in_context = ((positions >= context_start[:, tf.newaxis]) &
                  (positions < (context_start + context_length)[:, tf.newaxis]))
    paragraph_mask = tf.cast(in_context | tf.equal(positions, 0), tf.int32)
    sequence_output = self.encoder(inputs, training=False)["sequence_output"]
    beam = self.head(sequence_output, paragraph_mask, training=False)

    starts, ends = beam["start_top_index"], beam["end_top_index"]  # [b, k], [b, k, k]
    beam_size = tf.shape(starts)[1]
    flat_ends = tf.reshape(ends, [tf.shape(ends)[0], -1])
    valid = (tf.gather(in_context, starts, batch_dims=1)[:, :, tf.newaxis] &
             tf.reshape(tf.gather(in_context, flat_ends, batch_dims=1), tf.shape(ends)) &
             (ends >= starts[:, :, tf.newaxis]) &
             (ends - starts[:, :, tf.newaxis] < self.max_answer_length))
    scores = beam["start_top_log_probs"][:, :, tf.newaxis] + beam["end_top_log_probs"]
    scores = tf.reshape(tf.where(valid, scores, -float("inf")), tf.shape(flat_ends))
    best = tf.argmax(scores, axis=-1, output_type=tf.int32)
    score = tf.reduce_max(scores, axis=-1)
    start = tf.gather(starts, best // beam_size, batch_dims=1)
    end = tf.gather(flat_ends, best, batch_dims=1)

    found = tf.reduce_any(valid, axis=[1, 2])
    outputs = {"score": score}
    if self.version_2:
      outputs["no_answer_log_odds"] = beam["answerability_logits"]
      outputs["answerable"] = beam["answerability_logits"] <= self.null_threshold
      found &= outputs["answerable"]
    first_piece = tf.maximum(start - context_start, 0)
    last_piece = tf.maximum(end - context_start, 0)
    byte_start = tf.where(found, tf.gather(byte_starts, first_piece, batch_dims=1), 0)
    byte_end = tf.where(found, tf.gather(byte_ends, last_piece, batch_dims=1), 0)
    byte_start, byte_end = tf.cast(byte_start, tf.int32), tf.cast(byte_end, tf.int32)
    answer = tf.strings.substr(context, byte_start, byte_end - byte_start, unit="BYTE")
    prefix = tf.strings.substr(context, tf.zeros_like(byte_start), byte_start, unit="BYTE")
    char_start = tf.strings.length(prefix, unit="UTF8_CHAR")
    char_end = char_start + tf.strings.length(answer, unit="UTF8_CHAR")
    none = tf.fill(tf.shape(char_start), -1)
    outputs.update(answer_text=answer, answer_start=tf.where(found, char_start, none),
                   answer_end=tf.where(found, char_end, none),
                   answer_byte_start=tf.where(found, byte_start, none),
                   answer_byte_end=tf.where(found, byte_end, none))
    return outputs

  def signatures(self):
    """The signatures this module serves."""
    return {"serving_default": self.serve_text, "serve_text": self.serve_text,
            "serve_examples": self.serve_examples}
