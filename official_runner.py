"""The one entry point: train, evaluate or export a model described by gin files.

  python official_runner.py --mode=train_and_eval --gin_file=configs/quickstart.gin \
      --model_dir=/tmp/run

The training loop lands with the runner issue; until then this parses and validates flags
and gin files, then says what is not built yet.
"""
import sys

from absl import app
from absl import flags
import gin

FLAGS = flags.FLAGS
flags.DEFINE_enum("mode", None, ["train", "eval", "train_and_eval", "export"], "What to run.")
flags.DEFINE_multi_string("gin_file", [], "Gin config files, applied in order.")
flags.DEFINE_multi_string("gin_param", [], "Gin bindings applied after the files.")
flags.DEFINE_string("model_dir", None, "Where checkpoints, summaries and exports go.")
flags.mark_flags_as_required(["mode", "model_dir"])


def main(argv):
  del argv
  import modeling.transformer_encoder  # noqa: F401  (registers configurables)
  gin.parse_config_files_and_bindings(FLAGS.gin_file, FLAGS.gin_param)
  sys.exit(f"--mode={FLAGS.mode}: the training loop is not built yet (see the runner issue).")


if __name__ == "__main__":
  app.run(main)
