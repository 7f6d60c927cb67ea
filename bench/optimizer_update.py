r"""The optimizer update of a training step: Model Garden's ops against the fused ones.

  python -m bench.optimizer_update [--objective=electra] [--size=small] [--repeats=20] \
      [--gin_param=...]

Builds the objective's paper-config model (bench/pretraining_setup.py) and times, on random
gradients for its trainable variables, what the train step does after the backward pass:
the global gradient norm, clipping by it (threshold 1), and one LAMB update. Plain =
`tf.linalg.global_norm` + `tf.clip_by_global_norm` + Model Garden's
`official.modeling.optimization.lamb.LAMB`; fused = `training/gradient_clipping.py` +
`training/fused_lamb.py` (what the trainer uses), on separate copies of the variables.
Prints wall and process-CPU milliseconds per update (medians over --repeats, the two
alternating), their ratios and the largest difference between the two copies' variables
afterwards, then a JSON line.
"""
import json

from absl import app
from absl import flags
import numpy as np
import tensorflow as tf
from official.modeling.optimization import lamb

from bench import pretraining_setup
from bench.step_timing import describe_two
from bench.step_timing import time_two_in_turns
from training.fused_lamb import FusedLAMB
from training.gradient_clipping import clip_by_global_norm
from training.optimization import NO_WEIGHT_DECAY

FLAGS = flags.FLAGS  # --gin_param: official_runner's (pretraining_setup imports it).
pretraining_setup.define_model_flags()
flags.DEFINE_integer("repeats", 20, "Timed updates of each kind.")

LAMB_ARGUMENTS = dict(learning_rate=1e-3, weight_decay_rate=0.01,
                      exclude_from_weight_decay=list(NO_WEIGHT_DECAY))


def plain_update(optimizer, variables):
  @tf.function
  def update(grads):
    norm = tf.linalg.global_norm(grads)
    grads, _ = tf.clip_by_global_norm(grads, 1.0, use_norm=norm)
    optimizer.apply_gradients(zip(grads, variables))
    return norm
  return update


def fused_update(optimizer, variables):
  @tf.function
  def update(grads):
    grads, norm = clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, variables))
    return norm
  return update


def copy_variables(model):
  """Fresh variables with the model's names (LAMB's exclusions match names) and values."""
  return [tf.Variable(v, name=v.name.split(":")[0]) for v in model.trainable_variables]


def main(argv):
  del argv
  task = pretraining_setup.build_task(FLAGS.objective, FLAGS.size, FLAGS.batch_size,
                                      FLAGS.seq_length, FLAGS.gin_param)
  model = task.build_model()
  model(task.model_inputs(task.dummy_batch(), tf.constant(0, tf.int64), False),
        training=False)
  rng = np.random.default_rng(0)
  grads = [tf.constant(rng.normal(size=v.shape) * 1e-3, tf.float32)
           for v in model.trainable_variables]
  copies = {"plain": copy_variables(model), "fused": copy_variables(model)}
  updates = {"plain": plain_update(lamb.LAMB(**LAMB_ARGUMENTS), copies["plain"]),
             "fused": fused_update(FusedLAMB(**LAMB_ARGUMENTS), copies["fused"])}
  figures = time_two_in_turns(updates, [grads], FLAGS.repeats)
  figures["max_abs_difference"] = max(
      float(tf.reduce_max(tf.abs(a - b))) for a, b in zip(copies["plain"], copies["fused"]))
  figures.update(objective=FLAGS.objective, size=FLAGS.size, variables=len(grads),
                 parameters=int(sum(np.prod(v.shape) for v in copies["plain"])),
                 updates=1 + FLAGS.repeats, gin_params=list(FLAGS.gin_param))
  print(f"{len(grads)} variables, {figures['parameters']:,} parameters: "
        f"{describe_two(figures, updates)}; largest variable difference after "
        f"{figures['updates']} updates {figures['max_abs_difference']:.2g}", flush=True)
  print(json.dumps(figures), flush=True)


if __name__ == "__main__":
  app.run(main)
