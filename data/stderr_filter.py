"""Drops the C++ notices that TensorFlow's libraries write to stderr past TF_CPP_MIN_LOG_LEVEL.

XLA and other parts of TensorFlow log with absl's C++ logging, which TF_CPP_MIN_LOG_LEVEL
does not reach: every run printed "WARNING: All log messages before absl::InitializeLog() is
called are written to STDERR" and absl INFO lines such as "I0000 00:00:1796174936.947043
32119 device_compiler.h:196] Compiled cluster using XLA!  This line is logged at most once
...". A program (data/program.py `filter_stderr`) sends its stderr through this script, run
as its own process (standard library only): each line goes on to the real stderr as it
ends, except those two kinds; absl's warnings and errors (`W...`, `E...`) pass.
"""
import os
import re
import signal
import sys

NOTICE = re.compile(
    rb"^(WARNING: All log messages before absl::InitializeLog\(\) is called are written to "
    rb"STDERR|I\d{4} [\d:.]+ +\d+ [^ \]]+:\d+\] .*)\r?\n?$")


def is_notice(line: bytes) -> bool:
  """Whether `line` is one of the C++ notices dropped (see the module docstring)."""
  return NOTICE.match(line) is not None


def main() -> None:
  signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the program, which ends this
  output = os.fdopen(sys.stdout.fileno(), "wb", buffering=0)
  for line in sys.stdin.buffer:
    if not is_notice(line):
      output.write(line)


if __name__ == "__main__":
  main()
