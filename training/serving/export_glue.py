"""The fine-tuned GLUE (sentence prediction) export: `serve` on ids, `serve_text` on text.

Signatures (S = the records' max_seq_length for text and examples):
  `serve`(input_word_ids, input_mask, input_type_ids: int32 [batch, seq]), also served as
    `serving_default` (Model Garden's name for it)
  `serve_examples`(inputs: string [batch]): serialized tf.Examples with the fine-tuning
    records' `input_ids`, `input_mask`, `segment_ids` (int64 [S]; labels are ignored)
  `serve_text`(text: string [batch]) for single-sentence tasks,
  `serve_text`(text_a, text_b: string [batch]) for pair tasks (MNLI: premise, hypothesis);
    text_a and text_b of different row counts get an InvalidArgumentError naming both.
Outputs of both, classification: `logits`, `probabilities` float32 [batch, num_classes],
`label_id` int32 [batch], `label` string [batch] (the task's label name, e.g.
"entailment"); regression (STS-B): `score` float32 [batch]; a set of labels a text
(`--multi_label` records): `logits`, `probabilities` float32 [batch, labels] (a sigmoid per
label), `chosen` bool [batch, labels] (probability >= GlueTask.multi_label_threshold, kept
in the export) and `labels` string [batch] (the chosen labels' names joined by the records'
delimiter; "" for none).
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
  """

  def __init__(self, model: SentencePredictionModel, spec: SentenceTaskSpec,
               preprocessor: TextPreprocessor, threshold: float = 0.5):
    super().__init__(name="glue_serving")
    self.encoder = model.encoder
    self.head = model.head
    self.preprocessor = preprocessor
    self.labels = tuple(spec.labels)
    self.multi_label = spec.multi_label
    self.delimiter = spec.label_delimiter
    self.threshold = threshold
    self.serve = tf.function(self._serve, input_signature=ID_SIGNATURE)
    self.serve_examples = tf.function(
        lambda inputs: self._predict(parse_encoder_inputs(
            inputs, preprocessor.seq_length, FINETUNING_FEATURE_NAMES)),
        input_signature=EXAMPLES_SIGNATURE)
    if spec.is_pair:
      self.serve_text = tf.function(
          lambda text_a, text_b: self._predict(self.preprocessor(text_a, text_b)),
          input_signature=[text_spec("text_a"), text_spec("text_b")])
    else:
      self.serve_text = tf.function(lambda text: self._predict(self.preprocessor(text)),
                                    input_signature=[text_spec("text")])

  def _serve(self, input_word_ids, input_mask, input_type_ids):
    return self._predict(dict(input_word_ids=input_word_ids, input_mask=input_mask,
                              input_type_ids=input_type_ids))

  def _predict(self, inputs):
    """Encoder inputs -> the signature outputs (see the module docstring)."""
    outputs = tf.cast(self.head(encoder_outputs(self.encoder, inputs)["pooled_output"],
                                training=False), tf.float32)
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
