r"""An extractive QA task in MRQA's layout from the Python documentation: which object a
sentence's blank names, found in the rest of its paragraph.

  python -m studies.data.build_doc_cloze_qa_task --output_dir=OUT [--seed=0] \
      [--max_questions=1500,500]

Source: the Debian package python3.11-doc (its reST sources under
/usr/share/doc/python3.11/html/_sources; PSF License Agreement v2, examples 0BSD). The docs
mark every reference to a Python object with a Sphinx role (:func:`len`, :class:`dict`, ...).
A question is a sentence of a paragraph that references an object by such a role, rendered as
plain text with every occurrence of the object's name (as a whole word) replaced by "_"; its
context is the paragraph's other sentences; it is kept only when the name occurs there, and
every whole-word occurrence is a detected answer (MRQA's distant supervision, as its TriviaQA and SearchQA sets find their
spans). So the task is reading comprehension by cloze: find the object the blank stands for.

Pages go whole to train or dev (a stable hash of the page's path, 80 / 20); one question a
sentence (its first referenced name found in the context); each split cut to
--max_questions after a seeded shuffle. Writes OUT/train.jsonl.gz and OUT/dev.jsonl.gz in
MRQA 2019's layout (a header line, then a context and its questions a line; char_spans
inclusive) and OUT/stats.json.
"""
import gzip
import json
import os
import random
import re

from absl import app
from absl import flags

from studies.data import study_text
from studies.data.python_doc import exit_unless_installed
from studies.data.python_doc import page_sources
from studies.data.python_doc import page_split
from studies.data.python_doc import PYTHON_DOC

# The roles that name one Python object.
_OBJECT_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|exc|attr|const|data):`[^`]+`")
BLANK = "_"

FLAGS = flags.FLAGS


def define_flags():
  flags.DEFINE_string("output_dir", None, "Where the two .jsonl.gz files and stats.json go.")
  flags.DEFINE_integer("seed", 0, "Seed of the page split and the sample.")
  flags.DEFINE_list("max_questions", ["1500", "500"], "Most train and dev questions.")
  flags.mark_flag_as_required("output_dir")


def paragraph_questions(paragraph: str, qid_prefix: str):
  """The MRQA lines ({"context", "qas"}) of one raw reST paragraph."""
  raw_sentences = study_text.split_sentences(paragraph)
  rendered = [study_text.clean_rst_inline(sentence) for sentence in raw_sentences]
  lines = []
  for index, raw in enumerate(raw_sentences):
    for role in _OBJECT_ROLE.findall(raw):
      name = study_text.clean_rst_inline(role)
      whole_name = re.compile(r"(?<!\w)" + re.escape(name) + r"(?!\w)")
      context = " ".join(text for other, text in enumerate(rendered) if other != index)
      spans = [[match.start(), match.end() - 1] for match in whole_name.finditer(context)]
      if len(name) < 2 or not spans or not study_text.is_prose(rendered[index]):
        continue
      question = whole_name.sub(BLANK, rendered[index])
      lines.append({"context": context, "qas": [{
          "qid": f"{qid_prefix}-{index}", "question": question, "answers": [name],
          "detected_answers": [{"text": name, "char_spans": spans}]}]})
      break
  return lines


def build(output_dir: str, seed: int, max_questions, root: str = PYTHON_DOC) -> dict:
  rng = random.Random(seed)
  splits = {"train": [], "dev": []}
  for relative, source in page_sources(root):
    for number, paragraph in enumerate(study_text.rst_paragraphs(source, clean=False)):
      splits[page_split(relative, seed)].extend(
          paragraph_questions(paragraph, f"{relative}-{number}"))
  os.makedirs(output_dir, exist_ok=True)
  stats = {"source": "python3.11-doc (PSF License Agreement v2)", "seed": seed}
  for (split, lines), limit in zip(splits.items(), max_questions):
    rng.shuffle(lines)
    lines = lines[:limit]
    header = {"header": {"dataset": "PythonDocsCloze", "split": split}}
    with gzip.open(os.path.join(output_dir, f"{split}.jsonl.gz"), "wt",
                   encoding="utf-8") as f:
      f.write("".join(json.dumps(line) + "\n" for line in [header] + lines))
    spans = [len(line["qas"][0]["detected_answers"][0]["char_spans"]) for line in lines]
    stats[split] = {"questions": len(lines),
                    "mean_spans_a_question": sum(spans) / max(1, len(spans)),
                    "mean_context_words": sum(len(line["context"].split()) for line in lines)
                                          / max(1, len(lines))}
  with open(os.path.join(output_dir, "stats.json"), "w", encoding="utf-8") as f:
    json.dump(stats, f, indent=1)
  return stats


def main(argv):
  del argv
  exit_unless_installed("build_doc_cloze_qa_task")
  print(json.dumps(build(FLAGS.output_dir, FLAGS.seed,
                         [int(n) for n in FLAGS.max_questions]), indent=1))


if __name__ == "__main__":
  define_flags()
  app.run(main)
