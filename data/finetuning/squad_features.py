"""SQuAD examples -> fixed-length windows for the XLNet-style span head.

Each window is `[CLS] question [SEP] paragraph-slice [SEP]`, zero-padded; a long paragraph
gives several windows, `doc_stride` word pieces apart (BERT's sliding window; which window
gives a token its "max context" is Model Garden's `squad_lib._check_is_max_context`).

Besides the encoder inputs, a window carries what the head and answer recovery need:
`paragraph_mask` (positions an answer may start or end at: the paragraph slice and [CLS]),
`class_index` (where [CLS] is), `start_positions`/`end_positions` and `is_impossible`
(gold span; [CLS] and 1 when the window holds no answer), and for every paragraph token its
character span in the raw context (`token_char_starts`/`token_char_ends`, -1 elsewhere) and
`token_is_max_context`, so a predicted span maps back to the exact original text.
"""
import collections
from typing import Dict, List, Optional, Sequence, Tuple

from absl import logging
import numpy as np
import tensorflow as tf
from official.nlp.data import squad_lib

from data.finetuning.squad_reader import SquadExample
from data.finetuning.wordpiece_offsets import tokenize_with_char_offsets
from data.tokenization import Tokenizer

# The first window's unique id, as in Model Garden's squad_lib.
FIRST_UNIQUE_ID = 1000000000

_DocSpan = collections.namedtuple("DocSpan", ["start", "length"])
# (doc_spans, span_index, piece) -> whether that window gives the piece its max context.
_is_max_context = squad_lib._check_is_max_context  # pylint: disable=protected-access


def doc_spans(num_tokens: int, max_tokens: int, doc_stride: int) -> List[_DocSpan]:
  """Sliding windows (start, length) over `num_tokens` paragraph pieces."""
  spans = []
  start = 0
  while True:
    length = min(num_tokens - start, max_tokens)
    spans.append(_DocSpan(start, length))
    if start + length >= num_tokens:
      return spans
    start += min(length, doc_stride)


def answer_token_span(starts: Sequence[int], ends: Sequence[int], answer_start: int,
                      answer_end: int) -> Optional[Tuple[int, int]]:
  """First and last piece overlapping characters [answer_start, answer_end), or None."""
  overlapping = [i for i, (start, end) in enumerate(zip(starts, ends))
                 if end > answer_start and start < answer_end]
  return (overlapping[0], overlapping[-1]) if overlapping else None


def encode_examples(examples: Sequence[SquadExample], tokenizer: Tokenizer,
                    max_seq_length: int, doc_stride: int, max_query_length: int,
                    is_training: bool) -> Dict[str, np.ndarray]:
  """Windows of all examples.

  Args:
    examples: N examples.
    tokenizer: the pretraining WordPiece tokenizer (lower_case == strip_accents).
    max_seq_length: window length S.
    doc_stride: word pieces between the starts of consecutive windows.
    max_query_length: questions are cut to this many pieces.
    is_training: drop answerable examples none of whose answers' text is at its offset (a
      few SQuAD annotations); evaluation keeps every example. A window is labelled with the
      first of the example's answers it holds whole (SQuAD's training files give one; MRQA's
      every detected span), else as holding none (start = end = 0).

  Returns:
    Dict of numpy arrays with one row per window (W windows): int64 `unique_ids`,
    `example_index` (into `examples`), `class_index`, `start_positions`, `end_positions`,
    `is_impossible` [W]; int64 `input_ids`, `input_mask`, `segment_ids`, `paragraph_mask`,
    `token_char_starts`, `token_char_ends`, `token_is_max_context` [W, S].

  Raises:
    ValueError: a window would have no room for the paragraph.
  """
  if max_seq_length < max_query_length + 4:
    raise ValueError(f"max_seq_length={max_seq_length} leaves no room for the paragraph after "
                     f"a question of up to {max_query_length} pieces")
  contexts = sorted({example.context for example in examples})
  context_pieces = dict(zip(contexts, tokenize_with_char_offsets(tokenizer, contexts)))
  questions = tokenizer.tokenize([example.question for example in examples])
  rows = collections.defaultdict(list)
  skipped = 0
  for example_index, (example, question) in enumerate(zip(examples, questions)):
    question = question[:max_query_length]
    piece_ids, char_starts, char_ends = context_pieces[example.context]
    answer_spans = []  # the pieces of each answer found at its offset, in the example's order
    if example.answers and not example.is_impossible:
      for text, start in example.answers:
        if start >= 0 and example.context[start:start + len(text)] == text:
          found = answer_token_span(char_starts, char_ends, start, start + len(text))
          if found is not None:
            answer_spans.append(found)
      if not answer_spans and is_training:
        text, start = example.answers[0]
        logging.warning("Skipping %s: answer %r not found at offset %d", example.qas_id, text,
                        start)
        skipped += 1
        continue
    max_tokens = max_seq_length - len(question) - 3
    spans = doc_spans(len(piece_ids), max_tokens, doc_stride)
    for span_index, span in enumerate(spans):
      offset = len(question) + 2  # window position of the span's first piece
      window = slice(span.start, span.start + span.length)
      ids = ([tokenizer.cls_id] + question + [tokenizer.sep_id] + piece_ids[window] +
             [tokenizer.sep_id])
      row = {name: np.zeros([max_seq_length], np.int64) for name in (
          "input_ids", "input_mask", "segment_ids", "paragraph_mask", "token_is_max_context")}
      row["input_ids"][:len(ids)] = ids
      row["input_mask"][:len(ids)] = 1
      row["segment_ids"][offset:len(ids)] = 1
      row["paragraph_mask"][0] = 1
      row["paragraph_mask"][offset:offset + span.length] = 1
      row["token_char_starts"] = np.full([max_seq_length], -1, np.int64)
      row["token_char_ends"] = np.full([max_seq_length], -1, np.int64)
      row["token_char_starts"][offset:offset + span.length] = char_starts[window]
      row["token_char_ends"][offset:offset + span.length] = char_ends[window]
      for i in range(span.length):
        row["token_is_max_context"][offset + i] = _is_max_context(spans, span_index,
                                                                  span.start + i)
      start_position = end_position = 0
      inside = [found for found in answer_spans
                if found[0] >= span.start and found[1] < span.start + span.length]
      if inside:  # the first answer the window holds (SQuAD's training files have one)
        start_position = inside[0][0] - span.start + offset
        end_position = inside[0][1] - span.start + offset
      row.update(unique_ids=FIRST_UNIQUE_ID + len(rows["unique_ids"]),
                 example_index=example_index, class_index=0, start_positions=start_position,
                 end_positions=end_position, is_impossible=int(start_position == 0))
      for name, value in row.items():
        rows[name].append(value)
  if skipped:
    logging.warning("Skipped %d of %d examples whose answer was not found.", skipped,
                    len(examples))
  return {name: np.asarray(values, np.int64) for name, values in rows.items()}


def feature_spec(seq_length: int) -> Dict[str, tf.io.FixedLenFeature]:
  """The tf.io parse spec of the windows `encode_examples` produces."""
  spec = {name: tf.io.FixedLenFeature([], tf.int64) for name in (
      "unique_ids", "example_index", "class_index", "start_positions", "end_positions",
      "is_impossible")}
  spec.update({name: tf.io.FixedLenFeature([seq_length], tf.int64) for name in (
      "input_ids", "input_mask", "segment_ids", "paragraph_mask", "token_char_starts",
      "token_char_ends", "token_is_max_context")})
  return spec
