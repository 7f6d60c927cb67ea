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

TEAMS' MWS head and SCRIPT's head are masked-LM heads over the tied word table, the
structure of ElectraForMaskedLM's generator head. ELECTRA-HP's sampling head and TEAMS' RTD
branch have no transformers counterpart and stay in our checkpoints only. A fine-tuning
model names none: its `encoder` alone is the part. training/hf/hf_parts.py writes and reads
the parts.
"""
import dataclasses
from typing import List, Optional

import tf_keras

ELECTRA_FOR_PRETRAINING = "ElectraForPreTraining"
ELECTRA_FOR_MASKED_LM = "ElectraForMaskedLM"
ELECTRA_MODEL = "ElectraModel"
BERT_FOR_MASKED_LM = "BertForMaskedLM"
BERT_MODEL = "BertModel"


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
  """`model.exported_parts()`, or its `encoder` alone as an ElectraModel."""
  exported_parts = getattr(model, "exported_parts", None)
  if exported_parts is None:
    return [ModelPart("encoder", ELECTRA_MODEL, model.encoder)]
  return exported_parts()
