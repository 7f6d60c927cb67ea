"""The first N examples of a task's dev file (GLUE-style TSV or SQuAD JSON), for a cheaper eval.

Files in the task folders are already shuffled (studies/data/build_study_tasks.py), so the first
N are a random sample. SQuAD keeps whole paragraphs: the first ones holding >= N questions.
"""
import json
import os
from typing import Optional

DEV_FILES = ("dev.tsv", "dev-v1.1.json", "dev-v2.0.json")


def dev_file(input_dir: str) -> str:
  """The dev file of a task folder (dev.tsv or the SQuAD dev JSON)."""
  found = [name for name in DEV_FILES if os.path.exists(os.path.join(input_dir, name))]
  if len(found) != 1:
    raise ValueError(f"{input_dir}: expected one of {', '.join(DEV_FILES)}, found "
                     f"{found or 'none'}")
  return os.path.join(input_dir, found[0])


def write_subset(source: str, output_dir: str, num_examples: int) -> str:
  """Writes the first `num_examples` examples of `source` into output_dir; returns the path.

  Raises:
    ValueError: the file has fewer examples than asked for.
  """
  os.makedirs(output_dir, exist_ok=True)
  target = os.path.join(output_dir, "dev_subset_" + os.path.basename(source))
  if source.endswith(".tsv"):
    with open(source, encoding="utf-8") as f:
      lines = f.read().splitlines()
    kept, available = lines[:1 + num_examples], len(lines) - 1
    text = "\n".join(kept) + "\n"
  else:
    with open(source, encoding="utf-8") as f:
      squad = json.load(f)
    articles, available, count = [], 0, None
    for article in squad["data"]:
      paragraphs = []
      for paragraph in article["paragraphs"]:
        available += len(paragraph["qas"])
        if count is None:
          paragraphs.append(paragraph)
          if available >= num_examples:
            count = available
      if paragraphs:
        articles.append(dict(article, paragraphs=paragraphs))
    text = json.dumps(dict(squad, data=articles))
  if available < num_examples:
    raise ValueError(f"{source}: {available} examples, fewer than the {num_examples} asked for")
  with open(target, "w", encoding="utf-8") as f:
    f.write(text)
  return target


def input_dir_of(data_flags) -> Optional[str]:
  """The value of --input_dir in create_finetuning_data flags, or None."""
  values = [flag.split("=", 1)[1] for flag in data_flags if flag.startswith("--input_dir=")]
  return values[-1] if values else None
