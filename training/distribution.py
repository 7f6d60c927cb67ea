"""Picks the tf.distribute strategy a run uses. The global batch is the same on each."""
import tensorflow as tf
# MultiWorkerMirroredStrategy starts TensorFlow's coordination service with its 10 s heartbeat
# timeout and no public setting for it; configuring the service first, as the strategy would
# (collective_all_reduce_strategy.py, _initialize_multi_worker), is the only way in.
from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
from tensorflow.python.distribute import multi_worker_util
from tensorflow.python.eager import context

# TensorFlow's own default (tsl's coordination service: 10 s) is short for a worker on a
# machine loaded past its cores: a restarted worker that misses it stops both workers with
# "heartbeat timeout". A peer that dies closes its sockets and fails the collectives at once
# whatever this is; the timeout only bounds how long a hung (not dead) peer goes unnoticed.
DEFAULT_HEARTBEAT_TIMEOUT_S = 60

STRATEGIES = ("default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")


def _configure_coordination_service(heartbeat_timeout_s: int) -> None:
  """What MultiWorkerMirroredStrategy configures itself, with `heartbeat_timeout_s`.

  Only for a TF_CONFIG cluster of chief / worker tasks, as the strategy does; elsewhere (one
  process, a service already started) nothing changes.
  """
  resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
  cluster_spec = resolver.cluster_spec()
  if (not cluster_spec.jobs or resolver.task_type not in ("chief", "worker")
      or context.context().coordination_service is not None):
    return
  jobs = [coordination_config_pb2.CoordinatedJob(name=job, num_tasks=cluster_spec.num_tasks(job))
          for job in ("chief", "worker") if job in cluster_spec.jobs]
  context.context().configure_coordination_service(
      service_type="standalone",
      service_leader=multi_worker_util.coordination_leader(cluster_spec),
      coordinated_jobs=jobs, heartbeat_timeout_in_ms=int(heartbeat_timeout_s * 1000))


def create_strategy(name: str, tpu_address: str = "",
                    heartbeat_timeout_s: int = DEFAULT_HEARTBEAT_TIMEOUT_S
                    ) -> tf.distribute.Strategy:
  """Returns a strategy by name.

  Args:
    name: "default" (no distribution: whatever device TF picks), "one_device" (the first
      GPU, else the CPU), "mirrored" (all visible GPUs, else the CPU or logical CPUs),
      "multi_worker_mirrored" (workers from the TF_CONFIG environment variable) or "tpu".
    tpu_address: the TPU's name or grpc address for "tpu" ("" = the local TPU / the one
      the environment names).
    heartbeat_timeout_s: "multi_worker_mirrored": how long TensorFlow's coordination
      service waits for a worker's heartbeat before it stops every worker.

  Raises:
    ValueError: an unknown name.
  """
  if name == "default":
    return tf.distribute.get_strategy()
  if name == "one_device":
    device = "/gpu:0" if tf.config.list_logical_devices("GPU") else "/cpu:0"
    return tf.distribute.OneDeviceStrategy(device)
  if name == "mirrored":
    gpus = tf.config.list_logical_devices("GPU")
    devices = [d.name for d in (gpus or tf.config.list_logical_devices("CPU"))]
    return tf.distribute.MirroredStrategy(devices)
  if name == "multi_worker_mirrored":
    _configure_coordination_service(heartbeat_timeout_s)
    return tf.distribute.MultiWorkerMirroredStrategy()
  if name == "tpu":
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
    if tpu_address not in ("", "local"):
      tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
  raise ValueError(f"Unknown distribution strategy {name!r}; choose one of {STRATEGIES}")
