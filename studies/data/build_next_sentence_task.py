r"""A multiple-choice task from the Python documentation: which sentence comes next.

  python -m studies.data.build_next_sentence_task --output_dir=OUT [--seed=0] \
      [--max_questions=2000,500]

Source: the Debian package python3.11-doc (its reST sources under
/usr/share/doc/python3.11/html/_sources; PSF License Agreement v2, examples 0BSD), read as
prose sentences (studies/data/python_doc.py). A question is a sentence of a paragraph, its
context; the right choice is the paragraph's next sentence, the three others are sentences of
other paragraphs of the same page, so all four share the page's topic and words, and telling
them apart takes reading the context (SWAG's and HellaSwag's layout: a start and four
endings). The right choice's position is drawn uniformly (chance: 25%).

Pages go whole to train or dev (a stable hash of the page's path, 80 / 20); each split is
cut to --max_questions after a seeded shuffle. Writes OUT/train.jsonl and OUT/dev.jsonl
(`{"context": ..., "choices": [4 sentences], "label": i}`, create_finetuning_data
--task=multiple_choice's layout) and OUT/stats.json.
"""
import json
import os
import random

from absl import app
from absl import flags

from studies.data.python_doc import exit_unless_installed
from studies.data.python_doc import page_sources
from studies.data.python_doc import page_split
from studies.data.python_doc import PYTHON_DOC
from studies.data.python_doc import prose_paragraphs

NUM_CHOICES = 4

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("output_dir", None, "Where train.jsonl, dev.jsonl and stats.json go.")
  flags.DEFINE_integer("seed", 0, "Seed of the page split, the distractors and the sample.")
  flags.DEFINE_list("max_questions", ["2000", "500"], "Most train and dev questions.")
  flags.mark_flag_as_required("output_dir")


def page_questions(paragraphs, rng: random.Random):
  """A page's questions: every sentence followed by another in its paragraph, with three
  sentences of the page's other paragraphs as distractors (none when the page has too few)."""
  questions = []
  for index, sentences in enumerate(paragraphs):
    others = sorted({sentence for other, rest in enumerate(paragraphs) if other != index
                     for sentence in rest} - set(sentences))
    if len(others) < NUM_CHOICES - 1:
      continue
    for context, right in zip(sentences, sentences[1:]):
      choices = rng.sample(others, NUM_CHOICES - 1)
      label = rng.randrange(NUM_CHOICES)
      choices.insert(label, right)
      questions.append(dict(context=context, choices=choices, label=label))
  return questions


def build(output_dir: str, seed: int, max_questions, root: str = PYTHON_DOC) -> dict:
  rng = random.Random(seed)
  splits = {"train": [], "dev": []}
  for relative, source in page_sources(root):
    splits[page_split(relative, seed)].extend(page_questions(prose_paragraphs(source), rng))
  os.makedirs(output_dir, exist_ok=True)
  stats = {"source": "python3.11-doc (PSF License Agreement v2)", "seed": seed,
           "choices": NUM_CHOICES}
  for (split, questions), limit in zip(splits.items(), max_questions):
    rng.shuffle(questions)
    questions = questions[:limit]
    with open(os.path.join(output_dir, f"{split}.jsonl"), "w", encoding="utf-8") as f:
      f.write("".join(json.dumps(question) + "\n" for question in questions))
    positions = [sum(1 for q in questions if q["label"] == k) for k in range(NUM_CHOICES)]
    stats[split] = {"questions": len(questions), "right_choice_positions": positions,
                    "most_frequent_position_accuracy": 100.0 * max(positions) / len(questions)}
  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  exit_unless_installed("build_next_sentence_task")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed,
                         [int(n) for n in FLAGS.max_questions]), indent=1))


if __name__ == "__main__":
  define_flags()
  app.run(main)
