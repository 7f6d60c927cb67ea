"""Where each of our weights sits in a HuggingFace transformers checkpoint, and in what layout.

transformers' checkpoints (`model.safetensors`) hold PyTorch state dicts: names such as
`electra.encoder.layer.0.attention.self.query.weight`, and PyTorch layouts, where a Linear
weight is [out, in] while a Keras Dense kernel is [in, out]. Model Garden's attention keeps
its projections per head: query / key / value kernels [hidden, heads, head_size] with biases
[heads, head_size], the output kernel [heads, head_size, hidden]; transformers keeps one
[hidden, hidden] matrix each. A `WeightSlot` ties one of our variables to its transformers
name and converts between the two layouts, both ways.

The slot lists follow transformers' module trees:
  ElectraModel / BertModel       `<prefix>.embeddings.*`, `<prefix>.embeddings_project.*`
                                 (ELECTRA, E != H), `<prefix>.encoder.layer.<i>.*`
  ElectraForPreTraining          + `discriminator_predictions.{dense,dense_prediction}.*`
  ElectraForMaskedLM             + `generator_predictions.{dense,LayerNorm}.*`,
                                   `generator_lm_head.bias` (its weight is the word table;
                                   zeros for a head without output bias, TEAMS' MWS head)
  BertForMaskedLM                + `cls.predictions.transform.{dense,LayerNorm}.*`,
                                   `cls.predictions.bias` (decoder weight: the word table)
  ElectraForTokenClassification  + `classifier.*`
  ElectraForSequenceClassification + `classifier.{dense,out_proj}.*`
  BertForSequenceClassification  + `bert.pooler.dense.*` (the encoder's tanh pooler),
                                   `classifier.*`
  ElectraForQuestionAnswering    + `qa_outputs.*` (start and end logits: [2, hidden])
  ElectraForMultipleChoice       + `sequence_summary.summary.*`, `classifier.*` ([1, hidden])
  BertForMultipleChoice          + `bert.pooler.dense.*`, `classifier.*` ([1, hidden])
"""
import dataclasses
from typing import Dict, List

import numpy as np
import tensorflow as tf

from data.user_error import UserError

# How a variable's value is laid out in transformers' checkpoint.
SAME = "same"              # identical (tables, LayerNorm, biases up to a reshape)
KERNEL = "kernel"          # [..., out] Keras kernel whose leading axes are the input -> [out, in]
QKV_KERNEL = "qkv_kernel"  # [in, heads, head_size] -> [heads * head_size, in]


@dataclasses.dataclass(frozen=True)
class WeightSlot:
  """One of our variables and its place in a transformers state dict.

  Attributes:
    name: transformers' parameter name, e.g. `electra.embeddings.LayerNorm.weight`.
    variable: our variable.
    layout: SAME, KERNEL or QKV_KERNEL.
  """
  name: str
  variable: tf.Variable
  layout: str = SAME

  def to_hf(self, value=None) -> np.ndarray:
    """The variable's value (or `value` of its shape, e.g. its gradient) in transformers'
    layout, float32."""
    value = np.asarray(self.variable.numpy() if value is None else value, np.float32)
    if self.layout == KERNEL:
      return np.ascontiguousarray(value.reshape(-1, value.shape[-1]).T)
    if self.layout == QKV_KERNEL:
      return np.ascontiguousarray(value.reshape(value.shape[0], -1).T)
    return value.reshape(self.hf_shape)

  @property
  def hf_shape(self) -> tuple:
    """The shape transformers stores this weight with."""
    shape = tuple(self.variable.shape)
    if self.layout == KERNEL:
      return (shape[-1], int(np.prod(shape[:-1])))
    if self.layout == QKV_KERNEL:
      return (int(np.prod(shape[1:])), shape[0])
    if len(shape) == 2 and self.name.endswith(".bias"):  # per-head attention biases
      return (int(np.prod(shape)),)
    return shape

  def check_hf_shape(self, value: np.ndarray, source: str) -> None:
    """Raises UserError naming both shapes when `value` does not fit this weight, or its
    dtype when it holds no floats (an int tensor would load as garbage)."""
    if not np.issubdtype(np.asarray(value).dtype, np.floating):
      raise UserError(f"{source}: {self.name} holds {np.asarray(value).dtype} values, not "
                      "floats: it is no weight of this model")
    if tuple(np.shape(value)) != self.hf_shape:
      raise UserError(f"{source}: {self.name} has shape {list(np.shape(value))} there, but "
                       f"this model's {self.variable.name} needs {list(self.hf_shape)} (check "
                       "encoder_config and the generator size against the checkpoint's "
                       "config.json)")

  def assign_from_hf(self, value: np.ndarray, source: str) -> None:
    """Assigns a transformers-layout `value` to the variable.

    Raises:
      ValueError: `value` has another shape than this model's weight (names both).
    """
    self.check_hf_shape(value, source)
    value = np.asarray(value, np.float32)
    if self.layout in (KERNEL, QKV_KERNEL):
      value = value.T
    self.variable.assign(value.reshape(self.variable.shape))


def dense_slots(dense, name: str) -> List[WeightSlot]:
  """A Keras Dense (or EinsumDense with [..., out] kernel) as a PyTorch Linear `name`."""
  return [WeightSlot(f"{name}.weight", dense.kernel, KERNEL),
          WeightSlot(f"{name}.bias", dense.bias)]


def layer_norm_slots(layer_norm, name: str) -> List[WeightSlot]:
  return [WeightSlot(f"{name}.weight", layer_norm.gamma),
          WeightSlot(f"{name}.bias", layer_norm.beta)]


def transformer_layer_slots(block, name: str) -> List[WeightSlot]:
  """Model Garden's TransformerEncoderBlock (post-LayerNorm) as transformers' `*Layer`."""
  # pylint: disable=protected-access
  attention = block._attention_layer
  slots = []
  for projection, dense in (("query", attention._query_dense), ("key", attention._key_dense),
                            ("value", attention._value_dense)):
    slots += [WeightSlot(f"{name}.attention.self.{projection}.weight", dense.kernel, QKV_KERNEL),
              WeightSlot(f"{name}.attention.self.{projection}.bias", dense.bias)]
  return (slots
          + dense_slots(attention._output_dense, f"{name}.attention.output.dense")
          + layer_norm_slots(block._attention_layer_norm, f"{name}.attention.output.LayerNorm")
          + dense_slots(block._intermediate_dense, f"{name}.intermediate.dense")
          + dense_slots(block._output_dense, f"{name}.output.dense")
          + layer_norm_slots(block._output_layer_norm, f"{name}.output.LayerNorm"))


def encoder_slots(encoder, prefix: str) -> List[WeightSlot]:
  """A TransformerEncoder as transformers' `ElectraModel` / `BertModel` under `prefix`.

  Args:
    encoder: a built modeling.layers.transformer_encoder.TransformerEncoder without pooler.
    prefix: "electra" or "bert" (the base model's attribute in the *For* classes).
  """
  embeddings = encoder.embedding_network
  slots = [
      WeightSlot(f"{prefix}.embeddings.word_embeddings.weight", embeddings.embedding_table),
      WeightSlot(f"{prefix}.embeddings.position_embeddings.weight",
                 embeddings.position_embeddings.weights[0]),
      WeightSlot(f"{prefix}.embeddings.token_type_embeddings.weight",
                 embeddings.type_embeddings.embeddings),
  ] + layer_norm_slots(embeddings.layer_norm, f"{prefix}.embeddings.LayerNorm")
  if encoder.embedding_projection is not None:
    slots += dense_slots(encoder.embedding_projection, f"{prefix}.embeddings_project")
  for index, block in enumerate(encoder.transformer_layers):
    slots += transformer_layer_slots(block, f"{prefix}.encoder.layer.{index}")
  return slots


def rtd_head_slots(rtd_head) -> List[WeightSlot]:
  """modeling.heads.rtd_head.RTDHead as ElectraForPreTraining's `discriminator_predictions`."""
  return (dense_slots(rtd_head.dense, "discriminator_predictions.dense")
          + dense_slots(rtd_head.logit, "discriminator_predictions.dense_prediction"))


ELECTRA_MLM_BIAS = "generator_lm_head.bias"
BERT_MLM_BIAS = "cls.predictions.bias"


def _output_bias_slots(mlm_head, name: str) -> List[WeightSlot]:
  """The head's output bias as `name`; none for a head without (see zero_output_bias)."""
  if mlm_head.output_bias is None:
    return []
  return [WeightSlot(name, mlm_head.output_bias)]


def zero_output_bias(mlm_head, name: str) -> Dict[str, np.ndarray]:
  """{`name`: zeros [vocab]} for a MaskedLMHead without output bias (TEAMS' MWS head,
  equation 7), else {}: transformers' masked-LM classes always add a bias, and a zero one
  makes them compute what the head computes."""
  if mlm_head.output_bias is not None:
    return {}
  return {name: np.zeros([mlm_head.embedding_network.vocab_size], np.float32)}


def electra_mlm_head_slots(mlm_head) -> List[WeightSlot]:
  """modeling.heads.masked_lm_head.MaskedLMHead as ElectraForMaskedLM's generator head."""
  return (dense_slots(mlm_head.dense, "generator_predictions.dense")
          + layer_norm_slots(mlm_head.layer_norm, "generator_predictions.LayerNorm")
          + _output_bias_slots(mlm_head, ELECTRA_MLM_BIAS))


def bert_mlm_head_slots(mlm_head) -> List[WeightSlot]:
  """modeling.heads.masked_lm_head.MaskedLMHead as BertForMaskedLM's `cls.predictions`."""
  return (dense_slots(mlm_head.dense, "cls.predictions.transform.dense")
          + layer_norm_slots(mlm_head.layer_norm, "cls.predictions.transform.LayerNorm")
          + _output_bias_slots(mlm_head, BERT_MLM_BIAS))


def token_classification_slots(head, encoder) -> List[WeightSlot]:
  """TokenClassificationHead as *ForTokenClassification's `classifier`."""
  del encoder
  return dense_slots(head.dense, "classifier")


def electra_sequence_classification_slots(head, encoder) -> List[WeightSlot]:
  """HiddenLayerClassificationHead as ElectraForSequenceClassification's `classifier`."""
  del encoder
  return (dense_slots(head.dense, "classifier.dense")
          + dense_slots(head.out_proj, "classifier.out_proj"))


def electra_multiple_choice_slots(head, encoder) -> List[WeightSlot]:
  """HiddenLayerClassificationHead (one output) as ElectraForMultipleChoice's
  `sequence_summary.summary` and `classifier`."""
  del encoder
  return (dense_slots(head.dense, "sequence_summary.summary")
          + dense_slots(head.out_proj, "classifier"))


def bert_sequence_classification_slots(head, encoder) -> List[WeightSlot]:
  """The encoder's pooler and a SentencePredictionHead as BertForSequenceClassification's
  (and BertForMultipleChoice's, one output) `bert.pooler.dense` and `classifier`."""
  return dense_slots(encoder.pooler, "bert.pooler.dense") + dense_slots(head.dense,
                                                                         "classifier")


def question_answering_slots(head, encoder) -> List[WeightSlot]:
  """SpanEndpointsHead as *ForQuestionAnswering's `qa_outputs`."""
  del encoder
  return dense_slots(head.qa_outputs, "qa_outputs")
