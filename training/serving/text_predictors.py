r"""Raw text to answers with an ONNX or TFLite export, without TensorFlow: what the task's
SavedModel text signature returns, as numpy arrays.

  python -m training.serving.predict --export_dir=DIR/export/onnx/<step> \
      --text="the man ate bread" [--text_b=...] [--precision=int8]    (training/serving/predict.py)

or in Python:

  predictor = text_predictor("runs/my_task/export/tflite/9", precision="int8")
  predictor(["the man ate bread", "a day"])["label"]   # ['pos', 'neg']

Reads what `--mode=export_onnx` or `--mode=export_tflite` wrote (training/serving/
runtime_export.py): tokenizer.json (HuggingFace tokenizers), one model (training/serving/
exported_model.py) and export.json. By the export's kind:
  Classifier (a GlueTask run), as `serve_text`: `logits`, `probabilities`, `label_id`,
    `label` (one label a text); `logits`, `probabilities` (a sigmoid each), `chosen`,
    `labels` (a set of labels a text); `score` (a regression task).
  Tagger (a TaggingTask run), as `tag_text`: per word, padded to the row with the most words,
    `words`, `tags` (str; "" as padding), `tag_ids` (-1), `scores` (the tag's probability;
    0), `start`, `end` (code points into the text as sent, end exclusive), `byte_start`,
    `byte_end` (UTF-8 bytes; -1 as padding), and `num_words`. Words are split as BERT's
    basic tokenizer splits them (whitespace, and around punctuation and CJK ideographs) and
    tagged at their first piece, as the records were written. `tag_words` takes words
    already split, as the signature of that name.
  QuestionAnswerer (a SquadTask run), as `serve_text`(question, context): `answer_text`,
    `answer_start`, `answer_end` (code points), `answer_byte_start`, `answer_byte_end`
    (-1 for no answer), `score`; v2.0 also `no_answer_log_odds` and `answerable`.
  MultipleChoice (a MultipleChoiceTask run), as `serve_text`(context, question, choices):
    `logits`, `probabilities` [batch, choices], `choice`.
A batch is padded to its longest text, not to S; with `bucket_rows` > 0 it is sorted by
length and run in groups of that many rows, each padded to its own longest (less padding,
the same answers to within float rounding).

Refused (ValueError), with the words of the SavedModel's signatures (training/serving/
text_preprocessing.py, training/serving/export_tagging.py): a pair request whose two lists
differ in rows ("text_a has 3 rows and text_b has 1: a pair request needs one text_b per
text_a"); a pair for a single-text task or one text for a pair task; texts that are not
strings; choices rows of unequal length or fewer than two choices; a tagger's row longer
than S - 2 pieces ("text row 0 has 40 word pieces; this model tags at most 30 a row
(max_seq_length 32 less [CLS] and [SEP]): split it into sentences").

Not served here: windowed classifiers (`--window_stride`: windows are not joined); pretraining
exports (their models take ids: training/serving/exported_model.py runs them).
"""
import os
from typing import Dict, List, Optional, Sequence

import numpy as np

from training.serving.exported_model import ExportedModel
from training.serving.exported_model import read_description

SENTENCE_PREDICTION, TAGGING = "sentence_prediction", "tagging"
QUESTION_ANSWERING, MULTIPLE_CHOICE = "question_answering", "multiple_choice"
_ID_FIELDS = {"input_word_ids": "ids", "input_mask": "attention_mask",
              "input_type_ids": "type_ids"}


def _check_batch(name: str, texts) -> None:
  if texts is not None and (isinstance(texts, str)
                            or not all(isinstance(text, str) for text in texts)):
    raise ValueError(f"{name} must be a batch of strings (a list of str)")


def _softmax(logits: np.ndarray) -> np.ndarray:
  shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
  return shifted / shifted.sum(axis=-1, keepdims=True)


class TextPredictor:
  """An export's model, its tokenizer and its description (see the module docstring).

  Args:
    export_dir: DIR/export/onnx/<step> or DIR/export/tflite/<step>.
    precision: "float32", or the export's quantization ("int8", TFLite's "float16").
    threads: the runtime's intra-op threads (0: one per core).
    bucket_rows: 0 runs a batch in one call; N > 0 sorts it by length and runs N rows a call.
  """
  KIND = ""
  # Cut a row to S pieces as the records did (a classifier); else a longer row is refused.
  TRUNCATES = True

  def __init__(self, export_dir: str, precision: str = "float32", threads: int = 0,
               bucket_rows: int = 0):
    from tokenizers import Tokenizer  # pylint: disable=g-import-not-at-top
    self.model = ExportedModel(export_dir, precision, threads)
    self.description = self.model.description
    if self.description["kind"] != self.KIND:
      raise ValueError(f"{export_dir} holds a {self.description['kind']} model, not a "
                       f"{self.KIND} one")
    self.tokenizer = Tokenizer.from_file(os.path.join(export_dir, "tokenizer.json"))
    self.tokenizer.no_padding()  # (padded here: run_encodings)
    if not self.TRUNCATES:
      self.tokenizer.no_truncation()
    self.labels = list(self.description["labels"])
    self.seq_length = self.description["seq_length"]
    self.bucket_rows = bucket_rows

  def run_encodings(self, encodings) -> List[Dict[str, np.ndarray]]:
    """The model's outputs for each encoding (a row each), run padded to the batch's (or,
    with bucket_rows, each group's) longest row."""
    order = (sorted(range(len(encodings)), key=lambda row: len(encodings[row].ids))
             if self.bucket_rows else list(range(len(encodings))))
    size = self.bucket_rows or max(len(encodings), 1)
    rows: List[Optional[Dict[str, np.ndarray]]] = [None] * len(encodings)
    for begin in range(0, len(order), size):
      group = order[begin:begin + size]
      width = max(len(encodings[row].ids) for row in group)
      inputs = {name: np.array([getattr(encodings[row], field)
                                + [0] * (width - len(encodings[row].ids)) for row in group],
                               np.int32) for name, field in _ID_FIELDS.items()}
      outputs = self.model.run(inputs)
      for index, row in enumerate(group):
        rows[row] = {name: value[index] for name, value in outputs.items()}
    return rows


class Classifier(TextPredictor):
  """A GlueTask run's export: raw text (or pairs) to labels, as `serve_text`."""
  KIND = SENTENCE_PREDICTION

  def __init__(self, export_dir: str, precision: str = "float32", threads: int = 0,
               bucket_rows: int = 0):
    super().__init__(export_dir, precision, threads, bucket_rows)
    if self.description.get("window_stride"):
      raise ValueError(f"{export_dir}: the run reads long texts in windows, which this "
                       "predictor does not join; serve its SavedModel's serve_text")

  def __call__(self, text_a: Sequence[str], text_b: Optional[Sequence[str]] = None
               ) -> Dict[str, np.ndarray]:
    is_pair = bool(self.description.get("is_pair"))
    if (text_b is not None) != is_pair:
      raise ValueError("this task reads pairs: give text_a and text_b" if is_pair else
                       "this task reads one text: give text_a alone")
    _check_batch("text_a", text_a)
    _check_batch("text_b", text_b)
    if text_b is not None and len(text_a) != len(text_b):
      rows = "row" if len(text_a) == 1 else "rows"
      raise ValueError(f"text_a has {len(text_a)} {rows} and text_b has {len(text_b)}: a "
                       "pair request needs one text_b per text_a")
    batch = list(zip(text_a, text_b)) if text_b is not None else list(text_a)
    encodings = self.tokenizer.encode_batch(batch) if batch else []
    width = max(len(self.labels), 1)
    logits = np.array([row["logits"] for row in self.run_encodings(encodings)],
                      np.float32).reshape((len(batch), width) if self.labels else (-1,))
    if not self.labels:
      return {"score": logits}
    if self.description.get("multi_label"):
      probabilities = 1.0 / (1.0 + np.exp(-logits))
      chosen = probabilities >= self.description["threshold"]
      delimiter = self.description["label_delimiter"]
      return {"logits": logits, "probabilities": probabilities, "chosen": chosen,
              "labels": np.array([delimiter.join(label for label, on in zip(self.labels, row)
                                                 if on) for row in chosen], object)}
    label_id = logits.argmax(axis=-1).astype(np.int32)
    return {"logits": logits, "probabilities": _softmax(logits), "label_id": label_id,
            "label": np.array([self.labels[index] for index in label_id], object)}


class Tagger(TextPredictor):
  """A TaggingTask run's export: raw text to a tag per word, as `tag_text`."""
  KIND = TAGGING
  TRUNCATES = False

  def __call__(self, text: Sequence[str]) -> Dict[str, np.ndarray]:
    """As `tag_text`: raw texts, split into words here."""
    _check_batch("text", text)
    encodings = self._encode(list(text), "text")
    rows = [self._words(sent, encoding, output["logits"])
            for sent, encoding, output in zip(text, encodings, self.run_encodings(encodings))]
    return self._padded(rows, dict(words="", tags="", tag_ids=-1, scores=0.0, start=-1,
                                   end=-1, byte_start=-1, byte_end=-1))

  def tag_words(self, words: Sequence[Sequence[str]]) -> Dict[str, np.ndarray]:
    """As `tag_words`: rows of words already split (a list of lists of str); returns
    `tags`, `tag_ids`, `scores` and `num_words`."""
    if isinstance(words, str) or any(isinstance(row, str) for row in words):
      raise ValueError("words must be rows of words (a list of lists of str)")
    for row, row_words in enumerate(words):
      _check_batch("words", row_words)
      for index, word in enumerate(row_words):
        if not word.strip():
          raise ValueError(f"words: word {index} (row {row}) is empty or blank: send words, "
                           "not spaces")
    encodings = self._encode([list(row) for row in words], "words", is_pretokenized=True)
    for row, (row_words, encoding) in enumerate(zip(words, encodings)):
      kept = set(encoding.word_ids) - {None}
      for index in range(len(row_words)):
        if index not in kept:  # (the SavedModel would tag it as [UNK])
          raise ValueError(f"words: word {index} (row {row}) has no word pieces: it holds "
                           "only characters the tokenizer deletes")
    rows = [self._words(" ".join(row), encoding, output["logits"], with_text=False)
            for row, encoding, output in zip(words, encodings, self.run_encodings(encodings))]
    return self._padded(rows, dict(tags="", tag_ids=-1, scores=0.0))

  def _encode(self, batch, name: str, is_pretokenized: bool = False):
    encodings = (self.tokenizer.encode_batch(batch, is_pretokenized=is_pretokenized)
                 if batch else [])
    most = self.seq_length - 2
    for row, encoding in enumerate(encodings):
      if len(encoding.ids) - 2 > most:
        raise ValueError(f"{name} row {row} has {len(encoding.ids) - 2} word pieces; this "
                         f"model tags at most {most} a row (max_seq_length "
                         f"{self.seq_length} less [CLS] and [SEP]): split it into sentences")
    return encodings

  def _words(self, text: str, encoding, logits: np.ndarray, with_text: bool = True
             ) -> List[Dict]:
    """The row's words: each tagged at its first piece, spanning its first to last piece."""
    spans: Dict[int, List[int]] = {}
    for position, word in enumerate(encoding.word_ids):
      if word is not None:
        spans.setdefault(word, []).append(position)
    probabilities = _softmax(np.asarray(logits, np.float32))
    words = []
    for word in sorted(spans):
      first, last = spans[word][0], spans[word][-1]
      tag_id = int(probabilities[first].argmax())
      answer = dict(tags=self.labels[tag_id], tag_ids=tag_id,
                    scores=float(probabilities[first, tag_id]))
      if with_text:
        start, end = encoding.offsets[first][0], encoding.offsets[last][1]
        answer.update(words=text[start:end], start=start, end=end,
                      byte_start=len(text[:start].encode()), byte_end=len(text[:end].encode()))
      words.append(answer)
    return words

  @staticmethod
  def _padded(rows: List[List[Dict]], fill: Dict) -> Dict[str, np.ndarray]:
    """Each of `fill`'s fields as an array [batch, most words], padded with fill's value."""
    width = max([len(words) for words in rows] + [0])
    types = {str: object, int: np.int32, float: np.float32}
    answer = {name: np.array([[word[name] for word in words] + [value] * (width - len(words))
                              for words in rows], types[type(value)]).reshape(len(rows), width)
              for name, value in fill.items()}
    answer["num_words"] = np.array([len(words) for words in rows], np.int32)
    return answer


class QuestionAnswerer(TextPredictor):
  """A SquadTask run's export: (question, context) to the answer span, as `serve_text`.

  One window a question, packed as the SavedModel packs it (training/serving/
  export_squad.py): `[CLS] question [SEP] context [SEP]` padded to S, the question cut to
  max_query_length pieces and the context to what fits; among the head's beam, the (start,
  end) pair inside the context, end >= start, at most max_answer_length pieces, with the
  highest log P(start) + log P(end | start).
  """
  KIND = QUESTION_ANSWERING
  TRUNCATES = False  # (the window is cut here, as the SavedModel cuts it)

  def __init__(self, export_dir: str, precision: str = "float32", threads: int = 0,
               bucket_rows: int = 0):
    super().__init__(export_dir, precision, threads, bucket_rows)
    self.cls_id, self.sep_id = (self.tokenizer.token_to_id(token)
                                for token in ("[CLS]", "[SEP]"))

  def __call__(self, question: Sequence[str], context: Sequence[str]
               ) -> Dict[str, np.ndarray]:
    _check_batch("question", question)
    _check_batch("context", context)
    if len(question) != len(context):
      rows = "row" if len(question) == 1 else "rows"
      raise ValueError(f"question has {len(question)} {rows} and context has "
                       f"{len(context)}: a pair request needs one context per question")
    seq, most_query = self.seq_length, self.description["max_query_length"]
    inputs = {name: np.zeros([len(question), seq], np.int32)
              for name in ("input_word_ids", "input_mask", "input_type_ids", "paragraph_mask")}
    spans = []
    for row, (query, text) in enumerate(zip(question, context)):
      query_ids = self.tokenizer.encode(query, add_special_tokens=False).ids[:most_query]
      pieces = self.tokenizer.encode(text, add_special_tokens=False)
      query_ids = query_ids[:seq - 3]
      context_ids = pieces.ids[:seq - 3 - len(query_ids)]
      ids = [self.cls_id] + query_ids + [self.sep_id] + context_ids + [self.sep_id]
      first = len(query_ids) + 2
      inputs["input_word_ids"][row, :len(ids)] = ids
      inputs["input_mask"][row, :len(ids)] = 1
      inputs["input_type_ids"][row, first:len(ids)] = 1
      inputs["paragraph_mask"][row, first:first + len(context_ids)] = 1
      inputs["paragraph_mask"][row, 0] = 1
      spans.append((first, len(context_ids), pieces.offsets))
    beam = self.model.run(inputs) if len(question) else {}
    answers = dict(answer_text=[], answer_start=[], answer_end=[], answer_byte_start=[],
                   answer_byte_end=[], score=[])
    version_2 = "answerability_logits" in self.description["outputs"]
    if version_2:
      threshold = self.description.get("null_threshold") or 0.0
      answers.update(no_answer_log_odds=[], answerable=[])
    for row, (text, (first, length, offsets)) in enumerate(zip(context, spans)):
      starts, ends = beam["start_top_index"][row], beam["end_top_index"][row]
      scores = beam["start_top_log_probs"][row][:, None] + beam["end_top_log_probs"][row]
      inside = lambda index: (index >= first) & (index < first + length)
      valid = (inside(starts)[:, None] & inside(ends) & (ends >= starts[:, None])
               & (ends - starts[:, None] < self.description["max_answer_length"]))
      scores = np.where(valid, scores, -np.inf)
      best = np.unravel_index(int(np.argmax(scores)), scores.shape)
      found = bool(valid.any())
      if version_2:
        log_odds = float(beam["answerability_logits"][row])
        answers["no_answer_log_odds"].append(log_odds)
        answers["answerable"].append(log_odds <= threshold)
        found &= log_odds <= threshold
      answers["score"].append(float(scores[best]))
      if found:
        start = offsets[int(starts[best[0]]) - first][0]
        end = offsets[int(ends[best]) - first][1]
        span = dict(answer_text=text[start:end], answer_start=start, answer_end=end,
                    answer_byte_start=len(text[:start].encode()),
                    answer_byte_end=len(text[:end].encode()))
      else:
        span = dict(answer_text="", answer_start=-1, answer_end=-1, answer_byte_start=-1,
                    answer_byte_end=-1)
      for name, value in span.items():
        answers[name].append(value)
    types = dict(answer_text=object, score=np.float32, no_answer_log_odds=np.float32,
                 answerable=bool)
    return {name: np.array(values, types.get(name, np.int32))
            for name, values in answers.items()}


class MultipleChoice(TextPredictor):
  """A MultipleChoiceTask run's export: (context, question, choices) to the chosen one, as
  `serve_text`: each choice packed as `[CLS] context [SEP] question choice [SEP]` (the
  choice alone for an empty question), a batch padded to its longest pair."""
  KIND = MULTIPLE_CHOICE

  def __init__(self, export_dir: str, precision: str = "float32", threads: int = 0,
               bucket_rows: int = 0):
    super().__init__(export_dir, precision, threads, bucket_rows)
    # a question's choices in one call: padded to the longest pair
    self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]"))

  def __call__(self, context: Sequence[str], question: Sequence[str],
               choices: Sequence[Sequence[str]]) -> Dict[str, np.ndarray]:
    _check_batch("context", context)
    _check_batch("question", question)
    if isinstance(choices, str) or any(isinstance(row, str) for row in choices):
      raise ValueError("choices must be a batch of rows of choices (a list of lists of str)")
    for name, rows in (("question", question), ("choices", choices)):
      if len(rows) != len(context):
        raise ValueError(f"context has {len(context)} "
                         f"{'row' if len(context) == 1 else 'rows'} and {name} has "
                         f"{len(rows)}: a request needs one {name} per context")
    widths = {len(row) for row in choices}
    if len(widths) > 1:
      raise ValueError(f"choices rows hold {sorted(widths)} choices: every question of a "
                       "request needs the same number")
    count = widths.pop() if widths else 2
    if count < 2:
      raise ValueError(f"choices has {count} column(s); a question needs two or more choices")
    pairs = []
    for text, query, row in zip(context, question, choices):
      _check_batch("choices", row)
      query = query.strip()
      pairs += [(text, f"{query} {choice.strip()}" if query else choice.strip())
                for choice in row]
    if not pairs:
      empty = np.zeros([0, count], np.float32)
      return {"logits": empty, "probabilities": empty, "choice": np.zeros([0], np.int32)}
    encodings = self.tokenizer.encode_batch(pairs)
    shape = [len(context), count, len(encodings[0].ids)]
    inputs = {name: np.array([getattr(encoding, field) for encoding in encodings],
                             np.int32).reshape(shape) for name, field in _ID_FIELDS.items()}
    logits = np.asarray(self.model.run(inputs)["logits"], np.float32)
    return {"logits": logits, "probabilities": _softmax(logits),
            "choice": logits.argmax(axis=-1).astype(np.int32)}


PREDICTORS = {SENTENCE_PREDICTION: Classifier, TAGGING: Tagger,
              QUESTION_ANSWERING: QuestionAnswerer, MULTIPLE_CHOICE: MultipleChoice}


def text_predictor(export_dir: str, precision: str = "float32", threads: int = 0,
                   bucket_rows: int = 0) -> TextPredictor:
  """The predictor for the export's kind (PREDICTORS).

  Raises:
    ValueError: an export of a kind served by ids alone (see the module docstring).
  """
  kind = read_description(export_dir)["kind"]
  if kind not in PREDICTORS:
    raise ValueError(f"{export_dir} holds a {kind} model; the predictors read classifiers, "
                     "taggers, SQuAD and multiple-choice exports: run its model on ids "
                     "(training/serving/exported_model.py)")
  return PREDICTORS[kind](export_dir, precision, threads, bucket_rows)
