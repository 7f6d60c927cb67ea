"""The fine-tuned GLUE (sentence prediction) export: `serve` on ids, `serve_text` on text.

Signatures (S = the records' max_seq_length for text and examples):
  `serve`(input_word_ids, input_mask, input_type_ids: int32 [batch, seq]), also served as
    `serving_default` (Model Garden's name for it)
  `serve_examples`(inputs: string [batch]): serialized tf.Examples with the fine-tuning
    records' `input_ids`, `input_mask`, `segment_ids` (int64 [S]; labels are ignored)
  `serve_text`(text: string [batch]) for single-sentence tasks,
  `serve_text`(text_a, text_b: string [batch]) for pair tasks (MNLI: premise, hypothesis);
    text_a and text_b of different row counts get an InvalidArgumentError naming both.
    A text batch is packed to its longest row (at most S), not to S: the same outputs, and no
    encoder work on padding beyond the batch's longest row.
Outputs of both, classification: `logits`, `probabilities` float32 [batch, num_classes],
`label_id` int32 [batch], `label` string [batch] (the task's label name, e.g.
"entailment"); regression (STS-B): `score` float32 [batch]; a set of labels a text
(`--multi_label` records): `logits`, `probabilities` float32 [batch, labels] (a sigmoid per
label), `chosen` bool [batch, labels] (probability >= GlueTask.multi_label_threshold, kept
in the export) and `labels` string [batch] (the chosen labels' names joined by the records'
delimiter; "" for none).

Records made with `--window_stride` (a long text as several windows): `serve_text` windows
each text as the records do (S - 2 pieces, starting `window_stride` pieces apart:
data/finetuning/glue_features.py, `window_starts`), scores every window and joins a text's
windows' logits (or scores) by their mean or maximum (GlueTask.window_join, kept in the
export) before the outputs above, so a text of any length gets one answer; it also returns
`num_windows` int32 [batch]. `serve` and `serve_examples` score each row they are sent, as
one window.
"""
import tensorflow as tf

from data.finetuning.sentence_task import SentenceTaskSpec
from modeling.models.finetuning_models import SentencePredictionModel
from training.serving.export import EXAMPLES_SIGNATURE
from training.serving.export import FINETUNING_FEATURE_NAMES
from training.serving.export import ID_SIGNATURE
from training.serving.export import parse_encoder_inputs
from training.serving.export import encoder_outputs
from training.serving.export import text_spec
from training.serving.text_preprocessing import TextPreprocessor


class GlueServingModule(tf.Module):
  """A SentencePredictionModel's encoder and head behind `serve` and `serve_text`.

  Args:
    model: the fine-tuned SentencePredictionModel.
    spec: the task's SentenceTaskSpec (labels, pair or single, regression, multi-label).
    preprocessor: the TextPreprocessor of the task's vocab and sequence length.
    threshold: a multi-label task's decision threshold on each label's probability.
    window_stride: the records' window stride (0: none; `serve_text` then reads each text's
      first S - 2 pieces, as the records cut it).
    window_join: "mean" or "max" of a text's windows (tasks/window_join.py).
    bucket_rows: 0 packs a `serve_text` batch to its longest row; N > 0 sorts it by length
      and runs the encoder N rows at a time, each group packed to its own longest row (the
      same outputs, less work on padding: ExportConfig.bucket_rows).
  """

  def __init__(self, model: SentencePredictionModel, spec: SentenceTaskSpec,
               preprocessor: TextPreprocessor, threshold: float = 0.5,
               window_stride: int = 0, window_join: str = "mean", bucket_rows: int = 0):
    super().__init__(name="glue_serving")
    self.encoder = model.encoder
    self.head = model.head
    self.preprocessor = preprocessor
    self.labels = tuple(spec.labels)
    self.multi_label = spec.multi_label
    self.delimiter = spec.label_delimiter
    self.threshold = threshold
    self.window_stride = window_stride
    self.window_join = window_join
    self.serve = tf.function(self._serve, input_signature=ID_SIGNATURE)
    self.serve_examples = tf.function(
        lambda inputs: self._predict(parse_encoder_inputs(
            inputs, preprocessor.seq_length, FINETUNING_FEATURE_NAMES)),
        input_signature=EXAMPLES_SIGNATURE)
    self.bucket_rows = bucket_rows
    if window_stride:
      self.serve_text = tf.function(self._serve_windows, input_signature=[text_spec("text")])
    elif spec.is_pair:
      self.serve_text = tf.function(lambda text_a, text_b: self._serve_texts(text_a, text_b),
                                    input_signature=[text_spec("text_a"), text_spec("text_b")])
    else:
      self.serve_text = tf.function(lambda text: self._serve_texts(text),
                                    input_signature=[text_spec("text")])

  def _serve(self, input_word_ids, input_mask, input_type_ids):
    return self._predict(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                              input_type_ids=input_type_ids))

  def _serve_texts(self, *texts):
    """One or two text batches -> the signature outputs, packed to the batch's longest row or
    in length buckets (bucket_rows)."""
    if self.bucket_rows:
      segments = [self.preprocessor.tokenize(text) for text in texts]
      return self._outputs(self.preprocessor.in_length_buckets(segments, self._logits,
                                                               self.bucket_rows))
    return self._predict(self.preprocessor.pack_to_longest(*texts))

  def _serve_windows(self, text):
    """Each text's windows scored and joined (see the module docstring)."""
    pieces = self.preprocessor.tokenize(text)
    width = self.preprocessor.seq_length - 2
    lengths = pieces.row_lengths()
    beyond = tf.maximum(lengths - width, 0)
    num_windows = 1 + (beyond + self.window_stride - 1) // self.window_stride
    window_row = tf.repeat(tf.range(pieces.nrows()), num_windows)
    starts = tf.ragged.range(num_windows).flat_values * self.window_stride
    ends = tf.minimum(starts + width, tf.gather(lengths, window_row))
    offsets = tf.gather(pieces.row_splits, window_row)
    windows = tf.gather(pieces.values, tf.ragged.range(offsets + starts, offsets + ends))
    logits = self._logits(self.preprocessor.pack([windows]))
    join = tf.math.segment_mean if self.window_join == "mean" else tf.math.segment_max
    outputs = self._outputs(join(logits, window_row))
    outputs["num_windows"] = tf.cast(num_windows, tf.int32)
    return outputs

  def _logits(self, inputs):
    """Encoder inputs -> the head's float32 logits [batch, classes] (scores [batch])."""
    return tf.cast(self.head(encoder_outputs(self.encoder, inputs)["pooled_output"],
                             training=False), tf.float32)

  def _predict(self, inputs):
    """Encoder inputs -> the signature outputs (see the module docstring)."""
    return self._outputs(self._logits(inputs))

  def _outputs(self, outputs):
    """Logits [batch, classes] (scores [batch]) -> the signature outputs."""
    if not self.labels:
      return {"score": outputs}
    if self.multi_label:
      probabilities = tf.sigmoid(outputs)
      chosen = probabilities >= self.threshold
      names = tf.where(chosen, tf.constant(self.labels)[tf.newaxis], "")
      joined = tf.strings.reduce_join(
          tf.ragged.boolean_mask(names, chosen), axis=-1, separator=self.delimiter)
      return {"logits": outputs, "probabilities": probabilities, "chosen": chosen,
              "labels": joined}
    label_id = tf.argmax(outputs, axis=-1, output_type=tf.int32)
    return {"logits": outputs, "probabilities": tf.nn.softmax(outputs), "label_id": label_id,
            "label": tf.gather(tf.constant(self.labels), label_id)}

  def signatures(self):
    """The signatures this module serves."""
    return {"serving_default": self.serve, "serve": self.serve,
            "serve_examples": self.serve_examples, "serve_text": self.serve_text}
