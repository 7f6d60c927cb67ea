"""The fine-tuned multiple-choice export: a question's choices in, the chosen one out.

Signatures (S = the records' max_seq_length; C = the choices a question, any number >= 2,
the same for every question of a request):
  `serve_text`(context: string [batch], question: string [batch], choices: string
    [batch, C]), also served as `serving_default`: each choice is packed with its context
    as the records pack it (`[CLS] context [SEP] question choice [SEP]`, the choice alone
    for an empty question; the longer segment cut first: data/finetuning/
    multiple_choice_features.py);
  `serve`(input_word_ids, input_mask, input_type_ids: int32 [batch, C, S']);
  `serve_examples`(inputs: string [batch]): serialized tf.Examples of the records
    (`input_ids`, `input_mask`, `segment_ids` int64 [C_records * S]; labels ignored).
Outputs of all three: `logits`, `probabilities` float32 [batch, C] (a softmax over a
question's choices) and `choice` int32 [batch] (the most probable one's index).

A request is refused in-graph with an InvalidArgumentError naming the input, the serving
process alive: context or question not a batch [batch], choices not [batch, C] ("choices
must be a batch of rows of choices (rank 2, [batch, choices]); got rank 1"); context,
question and choices of different row counts ("context has 2 rows and choices has 1");
fewer than two choices; ids outside the encoder's tables. A text batch is packed to its
longest pair (at most S), not to S.
"""
import tensorflow as tf

from modeling.models.finetuning_models import flatten_choices
from modeling.models.finetuning_models import MultipleChoiceModel
from training.serving.export import EXAMPLES_SIGNATURE
from training.serving.export import ENCODER_INPUTS
from training.serving.export import encoder_outputs
from training.serving.export import FINETUNING_FEATURE_NAMES
from training.serving.export import parse_encoder_inputs
from training.serving.export import text_spec
from training.serving.text_preprocessing import pair_rows_check
from training.serving.text_preprocessing import TextPreprocessor

CHOICE_ID_SIGNATURE = [tf.TensorSpec([None, None, None], tf.int32, name=name)
                       for name in ENCODER_INPUTS]
# Any rank, so that a request of another rank reaches the graph's own check and message.
CHOICES_SPEC = tf.TensorSpec(None, tf.string, name="choices")


class MultipleChoiceServingModule(tf.Module):
  """A MultipleChoiceModel's encoder and head behind `serve_text`, `serve` and
  `serve_examples`.

  Args:
    model: the fine-tuned MultipleChoiceModel.
    preprocessor: the TextPreprocessor of the task's vocab and sequence length.
    num_choices: the records' choices a question (what `serve_examples` parses).
  """

  def __init__(self, model: MultipleChoiceModel, preprocessor: TextPreprocessor,
               num_choices: int):
    super().__init__(name="multiple_choice_serving")
    self.encoder = model.encoder
    self.head = model.head
    self.preprocessor = preprocessor
    self.record_shape = [num_choices, preprocessor.seq_length]
    self.serve_text = tf.function(self._serve_text, input_signature=[
        text_spec("context"), text_spec("question"), CHOICES_SPEC])
    self.serve = tf.function(
        lambda input_word_ids, input_mask, input_type_ids: self._predict(dict(
            input_word_ids=input_word_ids, input_mask=input_mask,
            input_type_ids=input_type_ids)),
        input_signature=CHOICE_ID_SIGNATURE)
    self.serve_examples = tf.function(self._serve_examples,
                                      input_signature=EXAMPLES_SIGNATURE)

  def _serve_examples(self, inputs):
    return self._predict(parse_encoder_inputs(inputs, self.record_shape,
                                              FINETUNING_FEATURE_NAMES))

  def _serve_text(self, context, question, choices):
    rank = tf.rank(choices)
    with tf.control_dependencies([tf.debugging.Assert(tf.equal(rank, 2), [tf.strings.join([
        "choices must be a batch of rows of choices (rank 2, [batch, choices]); got rank ",
        tf.strings.as_string(rank)])])]):
      choices = tf.ensure_shape(tf.identity(choices), [None, None])
    checks = (pair_rows_check([context, choices], ("context", "choices"))
              + pair_rows_check([context, question], ("context", "question")))
    num_choices = tf.shape(choices)[1]
    checks.append(tf.debugging.Assert(num_choices >= 2, [tf.strings.join([
        "choices has ", tf.strings.as_string(num_choices),
        " column(s); a question needs two or more choices"])]))
    with tf.control_dependencies(checks):
      contexts = tf.repeat(context, num_choices)
      questions = tf.strings.strip(tf.repeat(question, num_choices))
      flat_choices = tf.strings.strip(tf.reshape(choices, [-1]))
    seconds = tf.where(questions == "", flat_choices,
                       tf.strings.join([questions, flat_choices], separator=" "))
    packed = self.preprocessor.pack_to_longest(contexts, seconds)
    shape = tf.stack([tf.shape(choices)[0], num_choices, -1])
    return self._predict({name: tf.reshape(value, shape) for name, value in packed.items()})

  def _predict(self, inputs):
    """Encoder inputs [batch, C, S'] -> the signature outputs (see the module docstring)."""
    flat, choices_shape = flatten_choices(
        {name: tf.ensure_shape(inputs[name], [None, None, None]) for name in ENCODER_INPUTS})
    scores = self.head(encoder_outputs(self.encoder, flat)["pooled_output"], training=False)
    logits = tf.reshape(tf.cast(scores, tf.float32), choices_shape)
    return {"logits": logits, "probabilities": tf.nn.softmax(logits),
            "choice": tf.argmax(logits, axis=-1, output_type=tf.int32)}

  def signatures(self):
    """The signatures this module serves."""
    return {"serving_default": self.serve_text, "serve_text": self.serve_text,
            "serve": self.serve, "serve_examples": self.serve_examples}
