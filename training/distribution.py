"""Picks the tf.distribute strategy a run uses. The global batch is the same on each."""
import tensorflow as tf

STRATEGIES = ("default", "one_device", "mirrored", "multi_worker_mirrored", "tpu")


def create_strategy(name: str, tpu_address: str = "") -> tf.distribute.Strategy:
  """Returns a strategy by name.

  Args:
    name: "default" (no distribution: whatever device TF picks), "one_device" (the first
      GPU, else the CPU), "mirrored" (all visible GPUs, else the CPU or logical CPUs),
      "multi_worker_mirrored" (workers from the TF_CONFIG environment variable) or "tpu".
    tpu_address: the TPU's name or grpc address for "tpu" ("" = the local TPU / the one
      the environment names).

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
    return tf.distribute.MultiWorkerMirroredStrategy()
  if name == "tpu":
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address)
    if tpu_address not in ("", "local"):
      tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)
  raise ValueError(f"Unknown distribution strategy {name!r}; choose one of {STRATEGIES}")
