"""The lines `make demo` prints about its runs, read without TensorFlow (a fraction of a second
instead of an import of several seconds on a slow laptop).

  python -m scripts.demo_report pretraining MODEL_DIR
      the last held-out evaluation: disc_auc (ELECTRA-family runs) or MLM accuracy (BERT)
  python -m scripts.demo_report kjv_books RUN_DIR TEST_LABELS
      a fine-tuning run's dev accuracy (its last evaluation) and test accuracy (its
      predictions/KJV-BOOKS.tsv scored against TEST_LABELS)
"""
import os
import sys

from studies.common.finetune_seeds import last_evaluation
from studies.common.finetune_seeds import score_test_set
from training import metrics_records

USAGE = ("usage: python -m scripts.demo_report pretraining MODEL_DIR\n"
         "       python -m scripts.demo_report kjv_books RUN_DIR TEST_LABELS")


def pretraining_line(model_dir: str) -> str:
  """One line about a pretraining run's last evaluation."""
  path = os.path.join(model_dir, "metrics.jsonl")
  last = metrics_records.last_local_evaluation(path)
  if last is None:
    raise ValueError(f"{path} holds no evaluation")
  mlm = f"MLM accuracy {last['masked_lm_accuracy']:.3f}"
  if "disc_auc" in last:
    return f"disc_auc {last['disc_auc']:.3f} at step {last['step']} (chance 0.5; {mlm})"
  return f"{mlm} at step {last['step']} (masked_lm_loss {last['masked_lm_loss']:.3f})"


def kjv_books_line(run_dir: str, test_labels: str) -> str:
  """One line with a kjv_books fine-tuning run's dev and test accuracy."""
  dev = last_evaluation(os.path.join(run_dir, "metrics.jsonl"))
  predictions = os.path.join(run_dir, "predictions", "KJV-BOOKS.tsv")
  with open(predictions, encoding="utf-8") as stream:
    count = sum(1 for _ in stream) - 1  # the header
  test = score_test_set(predictions, test_labels)
  return f"dev {dev['accuracy']:.1f}%   test {test:.1f}% of {count}"


def main(argv) -> int:
  if len(argv) == 3 and argv[1] == "pretraining":
    line = pretraining_line(argv[2])
  elif len(argv) == 4 and argv[1] == "kjv_books":
    line = kjv_books_line(argv[2], argv[3])
  else:
    print(USAGE, file=sys.stderr)
    return 2
  print(line)
  return 0


if __name__ == "__main__":
  try:
    sys.exit(main(sys.argv))
  except (OSError, ValueError) as error:
    print(f"scripts.demo_report: {error}", file=sys.stderr)
    sys.exit(1)
