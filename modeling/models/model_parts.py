"""The parts of a model that other libraries load: each encoder with its pretraining head.

A pretraining model names its parts (`exported_parts()`), the encoder fine-tuning keeps
first, as the transformers class each pair has the structure of:

| our model                          | part          | architecture            |
| ---------------------------------- | ------------- | ----------------------- |
| ELECTRA, ELECTRA-HP                | discriminator | ElectraForPreTraining   |
| TEAMS (the MWS branch, its export) | discriminator | ElectraForMaskedLM      |
| SCRIPT (generator and critic)      | discriminator | ElectraForMaskedLM      |
| BERT                               | bert          | BertForMaskedLM         |
| ELECTRA, ELECTRA-HP, TEAMS         | generator     | ElectraForMaskedLM      |
| a model naming no parts            | encoder       | ElectraModel            |

Fine-tuning models (modeling/models/finetuning_models.py) name one part, the encoder with
its task head, when transformers has a class of that structure:

| fine-tuning model and head                           | part                    | architecture                      |
| ---------------------------------------------------- | ----------------------- | --------------------------------- |
| TokenClassificationModel                             | token_classification    | ElectraForTokenClassification     |
| SentencePredictionModel, HiddenLayerClassificationHead | sequence_classification | ElectraForSequenceClassification |
| SentencePredictionModel, encoder with BERT's pooler  | sequence_classification | BertForSequenceClassification     |
| QuestionAnsweringModel, SpanEndpointsHead            | question_answering      | ElectraForQuestionAnswering       |
| MultipleChoiceModel, HiddenLayerClassificationHead   | multiple_choice         | ElectraForMultipleChoice          |
| MultipleChoiceModel, encoder with BERT's pooler      | multiple_choice         | BertForMultipleChoice             |

ELECTRA's classes compute a BERT-shaped encoder (embedding_size == hidden_size) exactly too:
ElectraModel then has no embedding projection and is BertModel's computation. ELECTRA's own
GLUE head ([CLS], dropout, dense, no pooler) and XLNet's joint span head have no transformers
class: such a model names no parts and `export_hf` of its run is refused by the task.

TEAMS' MWS head and SCRIPT's head are masked-LM heads over the tied word table, the
structure of ElectraForMaskedLM's generator head. ELECTRA-HP's sampling head and TEAMS' RTD
branch have no transformers counterpart and stay in our checkpoints only. A model that names
no parts (`exported_parts()` missing or empty) has its `encoder` alone as the part.
training/hf/hf_parts.py writes and reads the parts.
"""
import dataclasses
from typing import List, Optional

import tf_keras

ELECTRA_FOR_PRETRAINING = "ElectraForPreTraining"
ELECTRA_FOR_MASKED_LM = "ElectraForMaskedLM"
ELECTRA_MODEL = "ElectraModel"
BERT_FOR_MASKED_LM = "BertForMaskedLM"
BERT_MODEL = "BertModel"
ELECTRA_FOR_TOKEN_CLASSIFICATION = "ElectraForTokenClassification"
ELECTRA_FOR_SEQUENCE_CLASSIFICATION = "ElectraForSequenceClassification"
BERT_FOR_SEQUENCE_CLASSIFICATION = "BertForSequenceClassification"
ELECTRA_FOR_QUESTION_ANSWERING = "ElectraForQuestionAnswering"
ELECTRA_FOR_MULTIPLE_CHOICE = "ElectraForMultipleChoice"
BERT_FOR_MULTIPLE_CHOICE = "BertForMultipleChoice"


@dataclasses.dataclass(frozen=True)
class ModelPart:
  """One encoder of a model and its head, as the transformers class they form.

  Attributes:
    name: "discriminator", "generator", "bert" or "encoder" (the export folder's name).
    architecture: the transformers class, e.g. ELECTRA_FOR_PRETRAINING.
    encoder: the TransformerEncoder.
    head: its head layer (None: the bare encoder).
  """
  name: str
  architecture: str
  encoder: tf_keras.layers.Layer
  head: Optional[tf_keras.layers.Layer] = None


def model_parts(model: tf_keras.Model) -> List[ModelPart]:
  """`model.exported_parts()`, or (none named) its `encoder` alone as an ElectraModel."""
  exported_parts = getattr(model, "exported_parts", None)
  parts = exported_parts() if exported_parts is not None else []
  return parts or [ModelPart("encoder", ELECTRA_MODEL, model.encoder)]
