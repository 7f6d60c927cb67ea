r"""[UNK] rate and pieces per character of vocabs on held-out text, per language.

  python bench/unk_rate.py --vocabs=wp.txt,sp.model \
      --heldout_files='work_dirs/multilingual/heldout/*.txt' [--nolower_case]

Each vocab (a WordPiece vocab.txt or a SentencePiece .model, e.g. from
`python -m data.build_vocab` on scripts/build_multilingual_corpus.py's train split)
tokenizes every line of every held-out file with this library's tokenizer
(data.tokenization.make_tokenizer: tensorflow-text in the graph, as records and serving do);
a file's name is its language (heldout/ja.txt -> ja). Per vocab and language:

  unk_rate          [UNK] pieces / all pieces
  lines_with_unk    share of lines with at least one [UNK]
  pieces_per_char   pieces / characters of the raw line (spaces included)
  round_trip        SentencePiece only: share of lines whose detokenized pieces equal the
                    line as the model normalises it (NFKC; case-folded when lower-cased)

Prints a Markdown table and one JSON object. Not part of CI; the counting is tested in
tests/bench/test_unk_rate.py.
"""
import argparse
import json
import os
import sys
from typing import Dict, List, Sequence

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from data import text_reading  # pylint: disable=g-import-not-at-top,wrong-import-position
from data import tokenization  # pylint: disable=g-import-not-at-top,wrong-import-position


def count_pieces(lines: Sequence[str], ids: Sequence[Sequence[int]], unk_id: int) -> Dict:
  """Counts of one language's lines and their piece ids.

  Args:
    lines: N raw lines.
    ids: the N lines' piece ids.
    unk_id: the vocab's [UNK] id.

  Returns:
    {"lines", "characters", "pieces", "unk_pieces", "lines_with_unk"}: ints.
  """
  return {"lines": len(lines), "characters": sum(map(len, lines)),
          "pieces": sum(map(len, ids)),
          "unk_pieces": sum(list(line_ids).count(unk_id) for line_ids in ids),
          "lines_with_unk": sum(unk_id in line_ids for line_ids in ids)}


def rates(counts: Dict) -> Dict:
  """unk_rate, lines_with_unk (a share) and pieces_per_char from `count_pieces`' counts."""
  return {"unk_rate": counts["unk_pieces"] / max(1, counts["pieces"]),
          "lines_with_unk": counts["lines_with_unk"] / max(1, counts["lines"]),
          "pieces_per_char": counts["pieces"] / max(1, counts["characters"])}


def measure(tokenizer: tokenization.Tokenizer, lines: List[str]) -> Dict:
  """count_pieces and rates of `lines` under `tokenizer` (plus round_trip for SentencePiece)."""
  ids = tokenizer.tokenize(lines)
  result = count_pieces(lines, ids, tokenizer.unk_id)
  result.update(rates(result))
  if tokenizer.kind == tokenization.SENTENCEPIECE:
    result["round_trip"] = sum(tokenizer.detokenize(line_ids) == tokenizer.normalize(line)
                               for line, line_ids in zip(lines, ids)) / max(1, len(lines))
  return result


def read_lines(path: str) -> List[str]:
  """The file's non-blank lines, as the records job reads them."""
  return [line for line in text_reading.iter_corpus_lines([path]) if line.strip()]


def markdown_table(results: Dict[str, Dict[str, Dict]]) -> str:
  """Rows vocab x language: [UNK] rate, lines with [UNK], pieces per character, round trip."""
  rows = ["| vocab | language | [UNK] / pieces | lines with [UNK] | pieces / char | "
          "round trip |", "|---|---|---|---|---|---|"]
  for vocab, languages in results.items():
    for language, r in languages.items():
      trip = f"{r['round_trip']:.2%}" if "round_trip" in r else "-"
      rows.append(f"| {vocab} | {language} | {r['unk_rate']:.2%} | {r['lines_with_unk']:.1%} "
                  f"| {r['pieces_per_char']:.3f} | {trip} |")
  return "\n".join(rows)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--vocabs", required=True, help="comma-separated vocab / .model files")
  parser.add_argument("--heldout_files", required=True, help="glob(s) of per-language files")
  parser.add_argument("--nolower_case", dest="lower_case", action="store_false",
                      help="WordPiece vocabs: cased tokenizing (default lower-cased)")
  args = parser.parse_args()
  files = text_reading.list_input_files(args.heldout_files)
  texts = {os.path.splitext(os.path.basename(f))[0]: read_lines(f) for f in files}
  results = {}
  for vocab_file in args.vocabs.split(","):
    tokenizer = tokenization.make_tokenizer(vocab_file, lower_case=args.lower_case)
    results[os.path.basename(vocab_file)] = {
        language: measure(tokenizer, lines) for language, lines in texts.items()}
  print(markdown_table(results))
  print(json.dumps({"heldout_files": args.heldout_files, "results": results}), flush=True)


if __name__ == "__main__":
  main()
