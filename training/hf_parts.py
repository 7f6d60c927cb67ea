"""Which HuggingFace model each part of one of our models becomes.

A pretraining model splits into the encoder that fine-tuning keeps, with its pretraining head
(`discriminator`; BERT's is called `bert`), and, where there is one, the `generator`:

| our model                          | part          | transformers class      |
| ---------------------------------- | ------------- | ----------------------- |
| ELECTRA, ELECTRA-HP                | discriminator | ElectraForPreTraining   |
| TEAMS (the MWS branch, its export) | discriminator | ElectraForMaskedLM      |
| SCRIPT (generator and critic)      | discriminator | ElectraForMaskedLM      |
| BERT (needs E == H)                | bert          | BertForMaskedLM         |
| ELECTRA, ELECTRA-HP, TEAMS         | generator     | ElectraForMaskedLM      |
| a fine-tuning model                | encoder       | ElectraModel            |

TEAMS' MWS head and SCRIPT's head are masked-LM heads over the tied word table, the
structure of ElectraForMaskedLM's generator head. ELECTRA-HP's sampling head and TEAMS' RTD
branch have no transformers counterpart and stay in our checkpoints only.
"""
import dataclasses
from typing import Callable, Dict, List, Optional

from modeling.bert import BertPretrainer
from modeling.encoder_config import EncoderConfig
from modeling.rtd_head import RTDHead
from training import hf_layout

ELECTRA_FOR_PRETRAINING = "ElectraForPreTraining"
ELECTRA_FOR_MASKED_LM = "ElectraForMaskedLM"
ELECTRA_MODEL = "ElectraModel"
BERT_FOR_MASKED_LM = "BertForMaskedLM"
BERT_MODEL = "BertModel"

# architecture -> (model_type, the head's slots or None)
ARCHITECTURES: Dict[str, tuple] = {
    ELECTRA_FOR_PRETRAINING: ("electra", hf_layout.rtd_head_slots),
    ELECTRA_FOR_MASKED_LM: ("electra", hf_layout.electra_mlm_head_slots),
    ELECTRA_MODEL: ("electra", None),
    BERT_FOR_MASKED_LM: ("bert", hf_layout.bert_mlm_head_slots),
    BERT_MODEL: ("bert", None),
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
  """
  name: str
  architecture: str
  config: EncoderConfig
  encoder: object
  head: Optional[object] = None

  @property
  def model_type(self) -> str:
    return ARCHITECTURES[self.architecture][0]

  def encoder_slots(self, model_type: Optional[str] = None) -> List[hf_layout.WeightSlot]:
    """The encoder's slots, named as `model_type`'s base model (default: this part's)."""
    return hf_layout.encoder_slots(self.encoder, model_type or self.model_type)

  def head_slots(self) -> List[hf_layout.WeightSlot]:
    head_slots: Optional[Callable] = ARCHITECTURES[self.architecture][1]
    return head_slots(self.head) if head_slots and self.head is not None else []

  def slots(self) -> List[hf_layout.WeightSlot]:
    return self.encoder_slots() + self.head_slots()


def hf_parts(model) -> List[HfPart]:
  """The parts of a built model, in the order above (the encoder fine-tuning keeps first).

  Raises:
    ValueError: a BERT model whose embedding width differs from its hidden width (BertConfig
      has no embedding_size).
  """
  encoder = model.encoder
  config = encoder.config
  if isinstance(model, BertPretrainer):
    if config.embedding_size != config.hidden_size:
      raise ValueError(
          f"BertForMaskedLM needs embedding_size == hidden_size, but this BERT has "
          f"E={config.embedding_size} H={config.hidden_size}; give it "
          "encoder_config.overrides = {'embedding_size': <hidden_size>} to be exportable")
    parts = [HfPart("bert", BERT_FOR_MASKED_LM, config, encoder, model.masked_lm_head)]
  elif isinstance(getattr(model, "rtd_head", None), RTDHead):
    parts = [HfPart("discriminator", ELECTRA_FOR_PRETRAINING, config, encoder, model.rtd_head)]
  else:
    mlm_head = getattr(model, "mws_head", None) or getattr(model, "masked_lm_head", None)
    if mlm_head is None:
      parts = [HfPart("encoder", ELECTRA_MODEL, config, encoder)]
    else:
      parts = [HfPart("discriminator", ELECTRA_FOR_MASKED_LM, config, encoder, mlm_head)]
  generator = getattr(model, "generator", None)
  if generator is not None:
    parts.append(HfPart("generator", ELECTRA_FOR_MASKED_LM, generator.config, generator,
                        model.generator_mlm_head))
  return parts
