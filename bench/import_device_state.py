r"""Turns the encoder bench/device_pretrain.py wrote back into a checkpoint to fine-tune from.

  python -m bench.import_device_state --device_output=OUT --output_dir=RUN

OUT is device_pretrain's --output_dir (encoder.json and its files, bfloat16 or float32).
RUN gets what `TrainerConfig.init_checkpoint = 'RUN'` reads from one of the library's runs:

- `ckpt-<step>` (+ `checkpoint`): the encoder's weights under `model/encoder/` (float32),
  the keys a fine-tuning model warm-starts from (training/checkpoints.py `warm_start`);
- `train_config.gin`: the gin config of the pretraining task the step was exported from
  (encoder.json names its objective, size, shapes and bindings), so a warm start takes the
  encoder from it and needs no encoder bindings (training/run_encoder.py);
- `vocab.txt` + `tokenization.json` where the token file it trained on names a vocab that
  exists here (training/run_vocab.py: a fine-tuning run on another vocab then stops).

Nothing is written when OUT is incomplete, names another encoder than the config builds, or
RUN already holds a checkpoint.
"""
import json
import os
import sys

from absl import app
from absl import flags
import gin
import numpy as np
import tensorflow as tf

from bench import pretraining_setup
from data.user_error import UserError
from data.user_error import user_error_message
from training import precision as precision_lib
from training.run_vocab import RunVocab
from training.run_vocab import write_run_vocab

FLAGS = flags.FLAGS
ENCODER_JSON = "encoder.json"
FORMAT = "electra-garden-device-encoder/1"
RUN_CONFIG = "train_config.gin"


def define_flags():
  flags.DEFINE_string("device_output", None, "device_pretrain.py's --output_dir.")
  flags.DEFINE_string("output_dir", None, "Where the checkpoint and its gin record go.")


def read_record(device_output: str) -> dict:
  """encoder.json of `device_output`; UserError if missing, of another format or incomplete."""
  path = os.path.join(device_output, ENCODER_JSON)
  if not os.path.isfile(path):
    raise UserError(f"{path} is missing: --device_output must be device_pretrain.py's "
                    "--output_dir")
  with open(path) as f:
    record = json.load(f)
  if record.get("format") != FORMAT:
    raise UserError(f"{path} is not device_pretrain.py's ({FORMAT})")
  missing = [name for name in record["files"]
             if not os.path.isfile(os.path.join(device_output, name))]
  if missing:
    raise UserError(f"{path} names {', '.join(missing)}, missing from {device_output}")
  return record


def _float32(stored: np.ndarray, dtype: str) -> np.ndarray:
  if dtype == "float32":
    return stored.astype(np.float32)
  return (stored.astype(np.uint32) << 16).view(np.float32)  # bfloat16's bits, widened


def read_arrays(device_output: str, record: dict):
  """[(name, float32 array)] in the record's order (a table split by rows joined again)."""
  shards, arrays, parts = {}, [], []
  for variable in record["variables"]:
    if variable["file"] not in shards:
      with np.load(os.path.join(device_output, variable["file"])) as shard:
        shards[variable["file"]] = dict(shard)
    parts.append(_float32(shards[variable["file"]][variable["key"]], record["dtype"]))
    if variable["part"] == variable["parts"] - 1:
      arrays.append((variable["name"], np.concatenate(parts).reshape(variable["shape"])))
      parts = []
  return arrays


def build_encoder(record: dict):
  """The pretraining model's encoder, built as the exported step's task builds it (this
  replaces the process's gin config with that task's)."""
  precision_lib.set_precision_policy("float32")
  task = pretraining_setup.build_task(record["objective"], record["size"], record["batch_size"],
                                      record["seq_length"], record["gin_params"])
  model = task.build_model()
  model(task.model_inputs(task.dummy_batch(), tf.constant(0), False))
  return model.encoder


def run(device_output: str, output_dir: str) -> str:
  """Writes the checkpoint, gin record and vocab into output_dir; returns the prefix.

  Raises:
    UserError: as the module docstring says (nothing written).
  """
  record = read_record(device_output)
  if tf.train.latest_checkpoint(output_dir) or tf.io.gfile.exists(
      os.path.join(output_dir, RUN_CONFIG)):
    raise UserError(f"--output_dir={output_dir} already holds a run: give a new folder")
  arrays = read_arrays(device_output, record)
  encoder = build_encoder(record)
  if len(encoder.variables) != len(arrays) or any(
      tuple(v.shape) != a.shape for v, (_, a) in zip(encoder.variables, arrays)):
    raise UserError(
        f"{device_output}/{ENCODER_JSON} holds {len(arrays)} arrays that are not the "
        f"{len(encoder.variables)} variables of the {record['objective']}-{record['size']} "
        f"encoder its config builds (bindings {record['gin_params']})")
  for variable, (_, value) in zip(encoder.variables, arrays):
    variable.assign(value)
  config_text = gin.config_str()
  manager = tf.train.CheckpointManager(
      tf.train.Checkpoint(model=tf.train.Checkpoint(encoder=encoder)), output_dir,
      max_to_keep=1)
  prefix = manager.save(checkpoint_number=record["step"])
  with open(os.path.join(output_dir, RUN_CONFIG), "w") as f:
    f.write(f"# {record['objective']}-{record['size']} pretrained through the exported step "
            f"(bench/device_pretrain.py, {record['step']} steps, "
            f"{record['train_flops']:.3g} FLOPs), imported by bench/import_device_state.py "
            f"from {os.path.abspath(device_output)}\n" + config_text)
  vocab_file = (record.get("token_file") or {}).get("vocab_file")
  if vocab_file and os.path.isfile(vocab_file):
    write_run_vocab(output_dir, RunVocab(vocab_file, record["token_file"]["lower_case"]))
  return prefix


def main(argv):
  del argv
  try:
    prefix = run(FLAGS.device_output, FLAGS.output_dir)
  except UserError as error:
    sys.exit(f"error: {user_error_message(error)}")
  print(f"wrote {prefix} and {os.path.join(FLAGS.output_dir, RUN_CONFIG)}: fine-tune with "
        f"--gin_param=\"TrainerConfig.init_checkpoint = '{FLAGS.output_dir}'\"", flush=True)


if __name__ == "__main__":
  define_flags()
  flags.mark_flags_as_required(["device_output", "output_dir"])
  app.run(main)
