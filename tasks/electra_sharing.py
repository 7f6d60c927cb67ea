"""What an ElectraPretrainingTask shares between generator and discriminator, by either name.

The generator-training variants (tasks/two_stage_electra_pretraining.py,
tasks/adversarial_electra_pretraining.py) build ELECTRA's model with the task's sharing
setting. It is `embedding_sharing` ("tied", "gdes") where they were written and
`weight_sharing` ("embeddings", "none", "gdes", "all"; modeling/weight_sharing.py) where the
weight-sharing options are; this reads whichever the task has, so they work with both.
"""
from typing import Dict, Tuple

SHARING_PARAMETERS = ("weight_sharing", "embedding_sharing")
# The schemes under which the generator keeps Transformer layers and an embedding
# sub-network of its own kind (shared or separate), as two-stage training's copy needs.
SHARED_EMBEDDINGS = ("tied", "embeddings")
SEPARATE = ("none",)


def sharing_setting(task) -> Tuple[str, str]:
  """(parameter name, value) of the task's sharing setting.

  Raises:
    AttributeError: the task has neither parameter.
  """
  for name in SHARING_PARAMETERS:
    if hasattr(task, name):
      return name, getattr(task, name)
  raise AttributeError(f"{type(task).__name__} has none of {SHARING_PARAMETERS}")


def sharing_arguments(task) -> Dict[str, str]:
  """The keyword argument that gives ElectraPretrainer the task's sharing setting."""
  return dict([sharing_setting(task)])
