r"""Derives `kjv_books`, a small labelled set in GLUE's layout, from the bundled KJV corpus.

  python -m data.make_kjv_books --corpus=data/sample/kjv.txt \
      --output_dir=data/sample/kjv_books

data/finetuning/kjv_books.py says how the books are found and the splits drawn. It never
loads TensorFlow, so it prints its one summary line without data/program.py's start.
"""
from absl import app
from absl import flags

from data.finetuning import kjv_books

FLAGS = flags.FLAGS


def define_flags():
  """Defines the command-line flags (absl)."""
  flags.DEFINE_string("corpus", "data/sample/kjv.txt", "The KJV, one verse per line.")
  flags.DEFINE_string("output_dir", "data/sample/kjv_books", "Where the TSV files go.")
  flags.DEFINE_integer("per_book", 250, "Verses drawn from each book.")
  flags.DEFINE_float("dev_fraction", 0.2, "Share of the verses in dev.tsv.")
  flags.DEFINE_float("test_fraction", 0.2, "Share of the verses in test.tsv.")
  flags.DEFINE_integer("seed", 0, "Sampling and shuffling seed.")


def main(argv):
  del argv
  try:
    with open(FLAGS.corpus, encoding="utf-8") as f:
      lines = f.read().split("\n")
    sizes = kjv_books.write_splits(kjv_books.book_verses(lines), FLAGS.output_dir,
                                   FLAGS.per_book, FLAGS.dev_fraction, FLAGS.test_fraction,
                                   FLAGS.seed)
  except (ValueError, OSError) as e:  # Not the KJV, or no such file: say which.
    raise SystemExit(f"error: --corpus={FLAGS.corpus}: {e}") from e
  print(f"kjv_books: {sizes['train']} train, {sizes['dev']} dev and {sizes['test']} test "
        f"verses in {FLAGS.output_dir}", flush=True)


if __name__ == "__main__":
  define_flags()
  app.run(main)
