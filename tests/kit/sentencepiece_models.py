"""A small multilingual corpus (written for these tests) and SentencePiece models built on it."""
import os

from data import sentencepiece_vocab
from tests.kit import paths

# English, German, Russian, Japanese and Chinese; Japanese and Chinese have no spaces.
MULTILINGUAL_LINES = (
    "In the beginning the river ran quietly past the old mill.",
    "Die Brücke über den Fluss ist alt, aber sie hält noch.",
    "Старый мост через реку всё ещё стоит.",
    "川の近くに古い水車小屋があります。",
    "朝になると、鳥が木の上で歌い始めました。",
    "河边有一座古老的磨坊。",
    "早上，鸟儿在树上开始唱歌。",
    "The miller counted 42 sacks of flour before noon.",
    "Der Müller zählte vor Mittag zweiundvierzig Säcke Mehl.",
    "Мельник пересчитал мешки с мукой до полудня.",
)
# Other sentences over the same characters, for round trips.
TEST_TEXTS = (
    "The old river ran past the mill.",
    "Die alte Brücke über den Fluss.",
    "Старый мельник стоит у реки.",
    "古い水車小屋の近くで鳥が歌います。",
    "古老的磨坊在河边。",
)


def write_corpus(directory: str, copies: int = 30) -> str:
  """Writes MULTILINGUAL_LINES `copies` times (each copy a document) plus the tiny KJV corpus;
  returns the path."""
  os.makedirs(directory, exist_ok=True)
  path = os.path.join(directory, "multilingual.txt")
  with open(paths.TINY_CORPUS, encoding="utf-8") as f:
    english = f.read()
  with open(path, "w", encoding="utf-8") as f:
    for _ in range(copies):
      f.write("\n".join(MULTILINGUAL_LINES) + "\n\n")
    f.write(english)
  return path


def build_model(directory: str, model_type: str = "unigram", vocab_size: int = 400,
                lower_case: bool = True) -> str:
  """Trains a SentencePiece model on `write_corpus`'s text; returns the .model path."""
  proto = sentencepiece_vocab.train_sentencepiece(
      write_corpus(directory), vocab_size, model_type, lower_case, character_coverage=1.0)
  output = os.path.join(directory, f"{model_type}.model")
  sentencepiece_vocab.write_model(proto, output)
  return output
