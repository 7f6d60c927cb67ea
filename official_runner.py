"""The one entry point: train, evaluate or export a model described by gin files.

  python official_runner.py --mode=train_and_eval --gin_file=configs/quickstart.gin \
      --model_dir=/tmp/run [--gin_param='TrainerConfig.train_steps = 100']

Modes: train, eval (the latest checkpoint in --model_dir, or --checkpoint), train_and_eval
(evaluates every TrainerConfig.validation_interval steps and at the end), export (SavedModels
under DIR/export/<name>/<step>/ from the same checkpoint; which ones follows from the task,
see training/serving/export_task.py), export_hf (HuggingFace transformers folders under
DIR/export/hf/<step>/, e.g. discriminator/ and generator/, or a fine-tuned run's
token_classification/; training/hf/hf_export.py), export_onnx (the dense core as ONNX under
DIR/export/onnx/<step>/, float32 and with --quantize=int8 also int8, the tokenizer beside it;
training/serving/export_onnx.py), export_tflite (the same as TFLite under DIR/export/tflite/<step>/,
float32 and with --quantize=float16 or int8 also that; training/serving/export_tflite.py). Every
binding is checked when the files are parsed, so a misspelled name fails before anything
runs; `--print_config` prints the bindings the files resolve to, each with the file and line
that set it, and stops (training/config_origins.py). A user error (bad binding, missing
records or checkpoint, a checkpoint of another model, a bad TrainerConfig value) is printed
as one `error: ...` line, exit status 1.

eval and the export modes need no --gin_file: without one they read the run's
own record (the newer of DIR/train_and_eval_config.gin and DIR/train_config.gin), and
--gin_param bindings apply after it, checked against the checkpoint as ever:

  python official_runner.py --mode=export --model_dir=/tmp/run

The parsed config is the run's record, DIR/<mode>_config.gin, written once the run is
accepted (a refused run leaves it as it was). A training run holds DIR/.run.lock while it
runs: a second one in the same DIR stops at once, naming the holder. A resumed run whose
bindings differ from its record stops, naming them, unless --allow_config_change
(training/run_record.py).
"""
import os
import sys

from data import program  # (first: before TensorFlow loads)
from absl import app
from absl import flags
from absl import logging
import gin

FLAGS = flags.FLAGS
flags.DEFINE_enum("mode", None, ["train", "eval", "train_and_eval", "export", "export_hf",
                                  "export_onnx", "export_tflite"], "What to run.")
flags.DEFINE_multi_string("gin_file", [], "Gin config files, applied in order.")
flags.DEFINE_multi_string("gin_param", [], "Gin bindings applied after the files.")
flags.DEFINE_bool("allow_gin_imports", False, "Let gin files and bindings import any module "
                  "and use dynamic_registration: they can then run any code (else only this "
                  "library's modules).")
flags.DEFINE_string("model_dir", None, "Where checkpoints, summaries and exports go.")
flags.DEFINE_bool("allow_config_change", False, "Resume a run in --model_dir with bindings "
                  "that differ from its record (DIR/<mode>_config.gin; kept as "
                  "DIR/<mode>_config.<n>.gin). Without it such a resume stops, naming them.")
flags.DEFINE_string("checkpoint", "", "eval/export: this checkpoint (prefix or directory) "
                    "instead of the latest one in --model_dir.")
flags.DEFINE_string("quantize", None, "export_onnx: int8, ONNX Runtime's dynamic int8 "
                    "model; export_tflite: float16 weights and/or dynamic-range int8 "
                    "(float16,int8 for both); written beside the float32 model "
                    "(ExportConfig.quantize).")
flags.DEFINE_bool("print_config", False, "Print the bindings the gin files and --gin_param "
                  "resolve to, each with the file and line that set it, and stop: nothing "
                  "is built, run or written (--mode and --model_dir are not needed).")

REPO_ROOT = os.path.dirname(os.path.abspath(__file__))
# The modes that read a trained run's own record when no --gin_file is given.
RECORD_MODES = ("eval", "export", "export_hf", "export_onnx", "export_tflite")
QUANTIZE_MODES = ("export_onnx", "export_tflite")


def register_configurables():
  """Imports every module that defines gin configurables, so bindings can be checked: the
  registered objectives' task modules (tasks/registry.py) and the training configs."""
  # pylint: disable=g-import-not-at-top,unused-import
  import modeling.layers.encoder_config
  import modeling.layers.transformer_encoder
  from tasks import registry
  import training.experiment
  import training.optimization
  registry.import_task_modules()


def parse_config(gin_files, gin_params, allow_imports=False):
  """Parses gin files (paths relative to the working directory or the repo root), checking
  every name, macros included; a warm start from one of our runs takes the encoder_config
  parameters left unbound from that run (training/run_encoder.py), saying so in one line.
  Imports other than this library's modules are refused unless `allow_imports`
  (training/gin_config.py).

  Raises:
    training.gin_config.ConfigError: one line naming the file, binding or macro.
    data.user_error.UserError: the bindings give another encoder than the init_checkpoint's
      run.
  """
  from training import gin_config  # pylint: disable=g-import-not-at-top
  from training import run_encoder  # pylint: disable=g-import-not-at-top
  register_configurables()
  gin_config.parse_checked(gin_files, gin_params, [REPO_ROOT], allow_imports)
  line = run_encoder.inherit_encoder()
  if line:
    print(line, flush=True)


def config_files(gin_files, mode, model_dir):
  """`gin_files`; or, for a RECORD_MODES mode given none, the trained run's record in
  `model_dir` when it has one (saying so in one line); else none (the bindings alone)."""
  from training.run_encoder import run_config_file  # pylint: disable=g-import-not-at-top
  if gin_files or mode not in RECORD_MODES or not model_dir:
    return list(gin_files)
  record = run_config_file(model_dir)
  if record is None:
    return []
  print(f"config: {record} (the run's record; --gin_param bindings apply after it)",
        flush=True)
  return [record]


def run_record(model_dir, mode, allow_config_change=False):
  """The record of a run of the parsed gin config (training/run_record.py): DIR/<mode>_config.gin,
  which a warm start from the run reads its encoder from (training/run_encoder.py)."""
  from training.run_record import RunRecord  # pylint: disable=g-import-not-at-top
  return RunRecord(model_dir, mode, gin.config_str(), allow_config_change)


def write_config(model_dir, mode):
  """Writes the parsed gin config to DIR/<mode>_config.gin now (no checks: run_experiment
  writes a run's own record once the run is accepted)."""
  run_record(model_dir, mode).write()


def print_config(gin_files, gin_params, allow_imports=False):
  """Parses the config as a run would and prints its bindings with their origins
  (training/config_origins.py); builds, runs and writes nothing."""
  from training import config_origins  # pylint: disable=g-import-not-at-top
  parse_config(gin_files, gin_params, allow_imports)
  print(config_origins.listing(gin_files, gin_params, [REPO_ROOT]), flush=True)


def main(argv):
  del argv
  if not FLAGS["verbosity"].present:
    logging.set_verbosity(logging.WARNING)  # orbit prints progress itself; --verbosity=0 for all
  from training.experiment import run_experiment  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  from data.user_error import user_error_message  # pylint: disable=g-import-not-at-top
  from data.user_error import UserError  # pylint: disable=g-import-not-at-top
  from training.reporting import quiet_orbit_progress  # pylint: disable=g-import-not-at-top
  quiet_orbit_progress()
  try:
    if FLAGS.print_config:
      print_config(FLAGS.gin_file, FLAGS.gin_param, FLAGS.allow_gin_imports)
      return
    gin_files = config_files(FLAGS.gin_file, FLAGS.mode, FLAGS.model_dir)
    gin_params = list(FLAGS.gin_param)
    if FLAGS.quantize:
      if FLAGS.mode not in QUANTIZE_MODES:
        raise UserError(f"--quantize is for --mode=export_onnx or --mode=export_tflite, not "
                        f"--mode={FLAGS.mode}")
      gin_params.append(f"ExportConfig.quantize = {FLAGS.quantize!r}")
    # fails before anything is written
    parse_config(gin_files, gin_params, FLAGS.allow_gin_imports)
    run_experiment(FLAGS.mode, FLAGS.model_dir, checkpoint_path=FLAGS.checkpoint,
                   record=run_record(FLAGS.model_dir, FLAGS.mode, FLAGS.allow_config_change))
  except UserError as error:  # anything else is a bug: its traceback is kept
    sys.exit(f"error: {user_error_message(error)}")  # exit status 1
  except KeyboardInterrupt:
    program.exit_interrupted(last_checkpoint_line(FLAGS.model_dir))


def last_checkpoint_line(model_dir):
  """Where a stopped run's last checkpoint is, and what the same command does next."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  latest = tf.train.latest_checkpoint(model_dir) if tf.io.gfile.isdir(model_dir) else None
  if latest is None:
    return f"no checkpoint in --model_dir={model_dir} yet; the same command starts again"
  return f"the last checkpoint is {latest}; the same command resumes from it"


def entry_point():
  """The `electra-garden` command (pyproject.toml); same flags as this file."""
  # here: importers only parse configs
  flags.register_multi_flags_validator(
      ["mode", "model_dir", "print_config"],
      lambda values: values["print_config"] or None not in (values["mode"],
                                                            values["model_dir"]),
      message="--mode and --model_dir are required (unless --print_config)")
  program.start(__name__)
  app.run(main)


if __name__ == "__main__":
  entry_point()
