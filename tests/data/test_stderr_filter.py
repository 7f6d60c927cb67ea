"""A program's console shows the library's lines, not absl's C++ notices (issue #65: every
run printed "All log messages before absl::InitializeLog()" and XLA's "Compiled cluster
using XLA!"), unless --verbosity asks for more."""
import os
import subprocess
import sys

from data import program
from data import stderr_filter
from tests.kit.paths import REPO_ROOT

_INIT_NOTICE = ("WARNING: All log messages before absl::InitializeLog() is called are written "
                "to STDERR\n")
_XLA_NOTICE = ("I0000 00:00:1796174001.361843   21930 device_compiler.h:196] Compiled cluster "
               "using XLA!  This line is logged at most once for the lifetime of the process.\n")


def test_the_filter_drops_the_notices_and_passes_every_other_line_in_order():
  kept = ["warning: a library warning\n", "step 1/2 | loss=1\n",
          "W0000 00:00:1796174001.361843   21930 file.cc:12] an absl warning\n",
          "E1202 01:02:03.456789   21930 file.cc:12] an absl error\n", "no newline at the end"]
  result = subprocess.run(
      [sys.executable, stderr_filter.__file__], capture_output=True, check=True,
      input="".join([_INIT_NOTICE, kept[0], _XLA_NOTICE] + kept[1:]).encode())
  assert result.stdout.decode() == "".join(kept)


def test_verbosity_flags_turn_the_filter_off():
  asks = program._asks_for_verbosity  # pylint: disable=protected-access
  for args in (["--verbosity=0"], ["-v", "1"], ["--v=1"], ["--verbosity", "-1"]):
    assert asks(args)
  assert not asks(["--vocab_file=v.txt", "--mode=train"])


_PROGRAM = """
import sys
from data import program
program.start("__main__", list_devices=False)
sys.stderr.write({notices!r})
sys.stderr.write("warning: the library's line\\n")
sys.stderr.flush()
import os
os.write(2, {notices!r}.encode())  # as C++ writes them: straight to fd 2
sys.exit("error: the last line")
"""


def _run(*args, **env):
  code = _PROGRAM.format(notices=_INIT_NOTICE + _XLA_NOTICE)
  environment = {key: value for key, value in os.environ.items()
                 if key != "TF_CPP_MIN_LOG_LEVEL"}
  environment.update(env)
  return subprocess.run([sys.executable, "-c", code, *args], cwd=REPO_ROOT,
                        capture_output=True, text=True, env=environment)


def test_a_program_shows_the_library_lines_alone_unless_asked_for_more():
  quiet = _run()
  assert quiet.returncode == 1
  assert quiet.stderr == "warning: the library's line\nerror: the last line\n"
  for verbose in (_run("--verbosity=0"), _run(TF_CPP_MIN_LOG_LEVEL="0")):
    assert verbose.stderr == (_INIT_NOTICE + _XLA_NOTICE + "warning: the library's line\n"
                              + _INIT_NOTICE + _XLA_NOTICE + "error: the last line\n")


def test_stdout_and_stderr_to_one_place_keep_their_order():
  code = ("import os, sys\nfrom data import program\n"
          "program.start('__main__', list_devices=False)\n"
          "for i in range(50):\n"
          "  print(f'out {i}', flush=True)\n"
          f"  os.write(2, {_XLA_NOTICE!r}.encode())\n"
          "  sys.stderr.write(f'err {i}\\n'); sys.stderr.flush()\n")
  environment = {key: value for key, value in os.environ.items()
                 if key != "TF_CPP_MIN_LOG_LEVEL"}
  result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, env=environment,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=True)
  assert result.stdout.splitlines() == [line for i in range(50)
                                        for line in (f"out {i}", f"err {i}")]
