"""training/distribution.py: the coordination service's heartbeat timeout reaches TensorFlow."""
import json
import os
import subprocess
import sys

import pytest

from data.user_error import UserError
from tests.kit.paths import REPO_ROOT
from training.experiment import RuntimeConfig

_PRINT_COORDINATION = """
from tensorflow.python.eager import context
from training import distribution
distribution._configure_coordination_service(77)
config = context.context().config.experimental.coordination_config
print(config.service_type or "none", config.heartbeat_timeout_in_ms,
      sorted((job.name, job.num_tasks) for job in config.coordinated_job_list))
"""


def _coordination_seen_by_tensorflow(tf_config):
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
  env.pop("TF_CONFIG", None)
  if tf_config:
    env["TF_CONFIG"] = json.dumps(tf_config)
  done = subprocess.run([sys.executable, "-c", _PRINT_COORDINATION], cwd=REPO_ROOT, env=env,
                        capture_output=True, text=True, timeout=300, check=True)
  return done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_two_worker_cluster_gets_the_heartbeat_timeout_and_one_process_nothing():
  cluster = {"worker": ["localhost:1", "localhost:2"]}
  assert (_coordination_seen_by_tensorflow({"cluster": cluster,
                                            "task": {"type": "worker", "index": 1}})
          == "standalone 77000 [('worker', 2)]")
  assert _coordination_seen_by_tensorflow(None) == "none 0 []"


def test_a_heartbeat_timeout_that_is_not_positive_is_a_user_error():
  with pytest.raises(UserError, match="RuntimeConfig.heartbeat_timeout_s must be > 0"):
    RuntimeConfig(heartbeat_timeout_s=0)
