"""The accumulation memory harness runs end to end on a tiny ELECTRA: one row per setting."""
import re

import pytest

from tests.kit import bench


@pytest.mark.slow  # runs the benchmark module in subprocesses
def test_harness_reports_memory_and_speed_per_setting():
  lines = bench.bench_output_lines("bench.accumulation_memory", [
      "--objective=electra", "--size=small", "--batch_size=4", "--seq_length=16",
      "--accumulation_steps=1,2", "--steps=1"] + [
          f"--gin_param={param}" for param in bench.TINY_ONE_LAYER])
  rows = [line for line in lines if re.match(r"\| \d+ x \d+ \|", line)]
  assert [row.split(" |")[0] for row in rows] == ["| 1 x 4", "| 2 x 2"]
  assert rows[0].endswith("(1.00x) |")
  for row in rows:
    peak, above, speed = re.findall(r"([\d.]+) GiB \| ([\d.]+) GiB \| ([\d.]+)", row)[0]
    assert float(peak) > 0 and float(peak) >= float(above) >= 0 and float(speed) > 0
