"""The HuggingFace side of a model's parts: transformers names and layouts of their weights.

Which parts a model has, and which transformers class each is, the model says
(modeling/models/model_parts.py: ELECTRA's discriminator is ElectraForPreTraining, BERT is
BertForMaskedLM, ...); this module adds each architecture's model_type and head layout.
"""
import dataclasses
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np

from data.user_error import UserError
from modeling.layers.encoder_config import EncoderConfig
from modeling.models import model_parts as parts_of
from modeling.models.model_parts import BERT_FOR_MASKED_LM
from modeling.models.model_parts import BERT_MODEL
from modeling.models.model_parts import ELECTRA_FOR_MASKED_LM
from modeling.models.model_parts import ELECTRA_FOR_PRETRAINING
from modeling.models.model_parts import ELECTRA_MODEL
from modeling.models.model_parts import model_parts
from training.hf import hf_layout


def _head_only(slots: Callable) -> Callable:
  """A pretraining head's slot list, called as (head, encoder)."""
  return lambda head, encoder: slots(head)


# architecture -> (model_type, the head's slots (head, encoder) -> slots, or None)
ARCHITECTURES: Dict[str, tuple] = {
    ELECTRA_FOR_PRETRAINING: ("electra", _head_only(hf_layout.rtd_head_slots)),
    ELECTRA_FOR_MASKED_LM: ("electra", _head_only(hf_layout.electra_mlm_head_slots)),
    ELECTRA_MODEL: ("electra", None),
    BERT_FOR_MASKED_LM: ("bert", _head_only(hf_layout.bert_mlm_head_slots)),
    BERT_MODEL: ("bert", None),
    parts_of.ELECTRA_FOR_TOKEN_CLASSIFICATION: ("electra",
                                                hf_layout.token_classification_slots),
    parts_of.ELECTRA_FOR_SEQUENCE_CLASSIFICATION: (
        "electra", hf_layout.electra_sequence_classification_slots),
    parts_of.BERT_FOR_SEQUENCE_CLASSIFICATION: ("bert",
                                                hf_layout.bert_sequence_classification_slots),
    parts_of.ELECTRA_FOR_QUESTION_ANSWERING: ("electra", hf_layout.question_answering_slots),
    parts_of.ELECTRA_FOR_MULTIPLE_CHOICE: ("electra", hf_layout.electra_multiple_choice_slots),
    parts_of.BERT_FOR_MULTIPLE_CHOICE: ("bert", hf_layout.bert_sequence_classification_slots),
}
# Fine-tuned architectures whose config.json names each output (id2label, label2id).
LABELLED = (parts_of.ELECTRA_FOR_TOKEN_CLASSIFICATION,
            parts_of.ELECTRA_FOR_SEQUENCE_CLASSIFICATION,
            parts_of.BERT_FOR_SEQUENCE_CLASSIFICATION)
# architecture -> its masked-LM output bias, which a head without one exports as zeros.
OUTPUT_BIASES: Dict[str, str] = {
    ELECTRA_FOR_MASKED_LM: hf_layout.ELECTRA_MLM_BIAS,
    BERT_FOR_MASKED_LM: hf_layout.BERT_MLM_BIAS,
}


@dataclasses.dataclass(frozen=True)
class HfPart:
  """One exportable part: an encoder, its head, and the transformers class they form.

  Attributes:
    name: "discriminator", "generator", "bert" or "encoder" (the export folder's name).
    architecture: one of ARCHITECTURES.
    config: the encoder's EncoderConfig.
    encoder: the TransformerEncoder (built).
    head: the head layer (None for ElectraModel).
    labels: a fine-tuned classifier's label names, by id (empty: unnamed, `LABEL_<id>`).
    problem_type: a classifier's transformers `problem_type` when its outputs do not say it
      ("multi_label_classification"), else None.
  """
  name: str
  architecture: str
  config: EncoderConfig
  encoder: object
  head: Optional[object] = None
  labels: Sequence[str] = ()
  problem_type: Optional[str] = None

  @property
  def model_type(self) -> str:
    return ARCHITECTURES[self.architecture][0]

  @property
  def num_labels(self) -> Optional[int]:
    """A fine-tuned classifier's number of outputs (None: no classifier)."""
    if self.architecture not in LABELLED:
      return None
    return getattr(self.head, "num_labels", None) or self.head.num_classes

  def label_names(self) -> List[str]:
    """`labels`, or transformers' default names `LABEL_<id>` when none were given.

    Raises:
      ValueError: labels given for another number of outputs than the head has.
    """
    if not self.labels:
      return [f"LABEL_{index}" for index in range(self.num_labels)]
    if len(self.labels) != self.num_labels:
      raise ValueError(f"{len(self.labels)} labels for a head of {self.num_labels} outputs")
    return list(self.labels)

  def encoder_slots(self, model_type: Optional[str] = None) -> List[hf_layout.WeightSlot]:
    """The encoder's slots, named as `model_type`'s base model (default: this part's)."""
    return hf_layout.encoder_slots(self.encoder, model_type or self.model_type)

  def head_slots(self) -> List[hf_layout.WeightSlot]:
    head_slots: Optional[Callable] = ARCHITECTURES[self.architecture][1]
    return head_slots(self.head, self.encoder) if head_slots and self.head is not None else []

  def slots(self) -> List[hf_layout.WeightSlot]:
    return self.encoder_slots() + self.head_slots()

  def zero_weights(self) -> Dict[str, np.ndarray]:
    """transformers weights this part has no variable for, written as zeros: the output
    bias of a head without one (TEAMS' MWS head)."""
    if self.head is None or self.architecture not in OUTPUT_BIASES:
      return {}
    return hf_layout.zero_output_bias(self.head, OUTPUT_BIASES[self.architecture])


def hf_parts(model, labels: Sequence[str] = (), problem_type: Optional[str] = None
             ) -> List[HfPart]:
  """The parts a built model names (modeling/models/model_parts.py), the encoder fine-tuning keeps
  first.

  Args:
    model: the built model.
    labels: a fine-tuned classifier's label names by id (given to its part).
    problem_type: the classifier's transformers problem_type (given to its part).

  Raises:
    ValueError: an architecture transformers has no layout for here.
    UserError: a BERT part whose embedding width differs from its hidden width (BertConfig
      has no embedding_size).
  """
  parts = []
  for part in model_parts(model):
    if part.architecture not in ARCHITECTURES:
      raise ValueError(f"part {part.name!r} names the architecture {part.architecture!r}; "
                       f"known: {sorted(ARCHITECTURES)}")
    config = part.encoder.config
    if (ARCHITECTURES[part.architecture][0] == "bert" and
        config.embedding_size != config.hidden_size):
      raise UserError(
          f"{part.architecture} needs embedding_size == hidden_size, but this BERT has "
          f"E={config.embedding_size} H={config.hidden_size}; give it "
          "encoder_config.overrides = {'embedding_size': <hidden_size>} to be exportable")
    parts.append(HfPart(part.name, part.architecture, config, part.encoder, part.head,
                        tuple(labels) if part.architecture in LABELLED else (),
                        problem_type if part.architecture in LABELLED else None))
  return parts
