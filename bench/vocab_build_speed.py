r"""Vocab building as whole processes: `python -m data.build_vocab` vs the bare libraries.

  python bench/vocab_build_speed.py --input_files='corpus/train/*.txt' [--vocab_size=8000] \
      [--repeats=2] [--builders=sentencepiece,wordpiece]

Times, in turns (ours, bare, ours, bare, ...), each as a fresh process, what a user runs:

  sentencepiece  ours: `python -m data.build_vocab --model=sentencepiece` (unigram,
                 lower-cased); bare: a `python -c` that calls
                 `sentencepiece.SentencePieceTrainer.train(input=files, ...)` with the same
                 settings (the library reads the files itself, as `spm_train` does)
  wordpiece      ours: `python -m data.build_vocab` (lower-cased, accents stripped);
                 bare: a `python -c` that trains `tokenizers.BertWordPieceTokenizer` on the
                 files (HuggingFace's own recipe, reading in Rust) and saves vocab.txt

Wall seconds and CPU seconds (user + system of the process and its threads, from wait4)
of each turn; the ratios ours / bare of the median and best wall time and of the median CPU
time (< 1.1 is the goal; < 1: ours is faster). On a shared machine wall times vary with the
other jobs; CPU times are steadier. Prints one JSON line per builder. Not part of CI.
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)  # run as a file: `from data ...` (TensorFlow-free)
from data.vocab_tokens import SPECIAL_TOKENS  # pylint: disable=wrong-import-position

_BARE_SENTENCEPIECE = """
import sentencepiece as spm
spm.set_random_generator_seed(12345)
spm.SentencePieceTrainer.train(
    input={files!r}, model_prefix={prefix!r}, model_type="unigram", vocab_size={vocab_size},
    hard_vocab_limit=False, character_coverage=0.9995, normalization_rule_name="nmt_nfkc_cf",
    pad_id=0, pad_piece="[PAD]", unk_id=1, unk_piece="[UNK]", bos_id=-1, eos_id=-1,
    control_symbols=["[CLS]", "[SEP]", "[MASK]"], max_sentence_length=100000,
    input_sentence_size=0, shuffle_input_sentence=False, num_threads=1, minloglevel=2)
"""
_BARE_WORDPIECE = """
from tokenizers import BertWordPieceTokenizer
tokenizer = BertWordPieceTokenizer(lowercase=True, strip_accents=True)
tokenizer.train({files!r}, vocab_size={vocab_size}, min_frequency=2,
                special_tokens={special!r}, show_progress=False)
tokenizer.save_model({directory!r})
"""


def commands(builder, files, vocab_size, directory):
  """(ours, bare) argv lists for `builder` writing under `directory`."""
  python = sys.executable
  if builder == "sentencepiece":
    ours = [python, "-m", "data.build_vocab", "--model=sentencepiece",
            f"--input_files={','.join(files)}", f"--vocab_size={vocab_size}",
            f"--output={os.path.join(directory, 'ours.model')}"]
    bare = [python, "-c", _BARE_SENTENCEPIECE.format(
        files=",".join(files), prefix=os.path.join(directory, "bare"), vocab_size=vocab_size)]
  else:
    ours = [python, "-m", "data.build_vocab", f"--input_files={','.join(files)}",
            f"--vocab_size={vocab_size}", f"--output={os.path.join(directory, 'ours.txt')}"]
    bare = [python, "-c", _BARE_WORDPIECE.format(files=list(files), vocab_size=vocab_size,
                                                 special=list(SPECIAL_TOKENS), directory=directory)]
  return ours, bare


def run_timed(argv):
  """(wall seconds, CPU seconds) of one process; raises if it fails."""
  start = time.perf_counter()
  process = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
  _, status, usage = os.wait4(process.pid, 0)
  wall = time.perf_counter() - start
  stderr = process.stderr.read().decode("utf-8", "replace")
  process.stderr.close()
  if os.waitstatus_to_exitcode(status) != 0:
    raise RuntimeError(f"{' '.join(argv[:3])} failed:\n{stderr[-2000:]}")
  return wall, usage.ru_utime + usage.ru_stime


def bench(builder, files, vocab_size, repeats):
  """Times ours and bare in turns; returns the result dict."""
  walls = {"ours": [], "bare": []}
  cpus = {"ours": [], "bare": []}
  with tempfile.TemporaryDirectory() as directory:
    ours, bare = commands(builder, files, vocab_size, directory)
    for _ in range(repeats):
      for name, argv in (("ours", ours), ("bare", bare)):
        wall, cpu = run_timed(argv)
        walls[name].append(round(wall, 2))
        cpus[name].append(round(cpu, 2))
        print(f"{builder} {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", file=sys.stderr,
              flush=True)
  ratio = lambda values, statistic: round(statistic(values["ours"]) /
                                          statistic(values["bare"]), 3)
  return {"builder": builder, "corpus_mb": round(sum(map(os.path.getsize, files)) / 1e6, 1),
          "vocab_size": vocab_size, "cpus": os.cpu_count(),
          "ours_wall_s": walls["ours"], "bare_wall_s": walls["bare"],
          "ours_cpu_s": cpus["ours"], "bare_cpu_s": cpus["bare"],
          "ours_over_bare_wall_median": ratio(walls, statistics.median),
          "ours_over_bare_wall_best": ratio(walls, min),
          "ours_over_bare_cpu_median": ratio(cpus, statistics.median)}


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--input_files", required=True)
  parser.add_argument("--vocab_size", type=int, default=8000)
  parser.add_argument("--repeats", type=int, default=2)
  parser.add_argument("--builders", default="sentencepiece,wordpiece")
  args = parser.parse_args()
  files = sorted(f for pattern in args.input_files.split(",") for f in glob.glob(pattern))
  if not files:
    sys.exit(f"--input_files={args.input_files} matches no file.")
  for builder in args.builders.split(","):
    print(json.dumps(bench(builder, files, args.vocab_size, args.repeats)), flush=True)


if __name__ == "__main__":
  main()
