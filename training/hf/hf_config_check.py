"""A transformers config.json's architecture fields against the encoder it is loaded into.

The weights' shapes say nothing of `num_attention_heads`, `hidden_act`, `layer_norm_eps` or
`position_embedding_type`: with 4 heads in config.json and 2 here, the same weights compute
another attention. A warm start from a transformers folder therefore compares every
architecture field config.json states with the part it is loaded into, before any weight is
read into it; the weights' shapes are then checked against the same part
(hf_layout.WeightSlot.check_hf_shape), so config.json, the weights and the encoder agree.
A field config.json leaves out is not compared (transformers would take its class default;
the shapes still decide the sizes).
"""
import math
from typing import Dict, List, Tuple

from data.user_error import UserError
from training.hf.hf_parts import HfPart

# transformers' hidden_act names -> ours (tf_keras activation names).
_ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "tanh": "tanh", "silu": "swish",
                "swish": "swish"}
# config.json field -> EncoderConfig field (the gin binding encoder_config.<field>).
ARCHITECTURE_FIELDS: Tuple[Tuple[str, str], ...] = (
    ("vocab_size", "vocab_size"), ("hidden_size", "hidden_size"),
    ("embedding_size", "embedding_size"), ("num_hidden_layers", "num_layers"),
    ("num_attention_heads", "num_attention_heads"),
    ("intermediate_size", "intermediate_size"), ("hidden_act", "activation"),
    ("max_position_embeddings", "max_sequence_length"),
    ("type_vocab_size", "type_vocab_size"), ("layer_norm_eps", "norm_epsilon"),
    ("position_embedding_type", "relative_position"))


def _ours(hf_field: str, value):
  """config.json's `value` of `hf_field` in EncoderConfig's terms (None: no counterpart)."""
  if hf_field == "hidden_act":
    return _ACTIVATIONS.get(value) if isinstance(value, str) else None
  return value


def _agree(ours, theirs) -> bool:
  if isinstance(ours, float) or isinstance(theirs, float):
    return (isinstance(theirs, (int, float)) and not isinstance(theirs, bool) and
            math.isclose(ours, theirs, rel_tol=1e-6))
  return type(ours) is type(theirs) and ours == theirs


def config_disagreements(part: HfPart, config: Dict) -> List[str]:
  """Each architecture field where config.json and `part`'s encoder differ, as
  "num_attention_heads = 4 in config.json, 2 here (encoder_config.num_attention_heads)"."""
  found = []
  for hf_field, field in ARCHITECTURE_FIELDS:
    if hf_field not in config:
      continue
    ours = getattr(part.config, field)
    if hf_field == "position_embedding_type":
      # transformers' absolute table is ours (beside which a "t5" encoder adds its bias);
      # relative_key(_query) has no counterpart here.
      if config[hf_field] == "absolute":
        continue
      ours = "absolute"
    elif _agree(ours, _ours(hf_field, config[hf_field])):
      continue
    found.append(f"{hf_field} = {config[hf_field]!r} in config.json, {ours!r} here "
                 f"(encoder_config.{field})")
  return found


def check_config(part: HfPart, config: Dict, source: str) -> None:
  """Stops a warm start whose config.json describes another encoder than `part`'s.

  Raises:
    UserError: one line naming the folder, the part and every field that differs, with
      both values.
  """
  found = config_disagreements(part, config)
  if found:
    raise UserError(f"{source}/config.json describes another encoder than this model's "
                    f"{part.name}: {'; '.join(found)}")
