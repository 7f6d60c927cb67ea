"""The special tokens and names every vocab shares (imported by data.tokenization and by the
vocab builders, which stay free of TensorFlow: see data/file_io.py)."""

PAD_TOKEN = "[PAD]"
UNK_TOKEN = "[UNK]"
CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
MASK_TOKEN = "[MASK]"
SPECIAL_TOKENS = (PAD_TOKEN, UNK_TOKEN, CLS_TOKEN, SEP_TOKEN, MASK_TOKEN)
WORD_CONTINUATION_PREFIX = "##"
# SentencePiece marks a piece that begins a word with this (U+2581); the others continue one.
SENTENCEPIECE_WORD_START = "\u2581"
WORDPIECE = "wordpiece"
SENTENCEPIECE = "sentencepiece"
TOKENIZER_KINDS = (WORDPIECE, SENTENCEPIECE)
# The casing every tool uses unless told otherwise (build_vocab, the preprocessing jobs, the
# tokenizer): BERT's and ELECTRA's uncased recipe.
DEFAULT_LOWER_CASE = True
