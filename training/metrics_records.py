"""Parsing metrics.jsonl without TensorFlow (for reports that run after a job, e.g. the demo).

training.reporting.MetricsFile writes the file (through tf.io.gfile, any filesystem) and reads
it with the same parser; this module reads a local file with the standard library only.
"""
import json
import os
from typing import Dict, Iterable, List, Optional


def parse_records(lines: Iterable[str]) -> List[dict]:
  """Every complete JSON record among `lines`, in order; a line a crash cut short is skipped."""
  parsed = []
  for line in lines:
    try:
      parsed.append(json.loads(line))
    except json.JSONDecodeError:
      continue
  return parsed


def last_local_evaluation(path: str, split: str = "eval") -> Optional[Dict[str, object]]:
  """The last record of `split` in a local metrics.jsonl, step kept (None: no such record)."""
  if not os.path.exists(path):
    return None
  with open(path, encoding="utf-8") as stream:
    evaluations = [record for record in parse_records(stream) if record.get("split") == split]
  return evaluations[-1] if evaluations else None
