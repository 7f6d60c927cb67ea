"""export_hf with a SentencePiece model: transformers' AutoTokenizer gives our ids, and the
folder warm-starts our model."""
import numpy as np
import pytest
import transformers

from data import tokenization
from modeling.models.bert import BertPretrainer
from tests.kit import sentencepiece_models
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import our_outputs
from tests.kit.inputs import tiny_inputs
from training.hf import hf_sentencepiece
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.hf.hf_parts import hf_parts
from training.run_vocab import RunVocab

TEXTS = list(sentencepiece_models.TEST_TEXTS) + [
    "", "  Spaced   OUT  ", "Hello, World! 9,000 sacks; ``quoted'' Café naïve",
    "ＦＵＬＬ　ｗｉｄｔｈ ﬁ", "早上，鸟儿在树上开始唱歌。"]


def _bert(vocab_size, seed):
  model = BertPretrainer(tiny_encoder(vocab_size, embedding_size=32))
  inputs = tiny_inputs(seq=8, vocab=vocab_size, seed=seed)
  for part in hf_parts(model):
    our_outputs(part, inputs)
  return model, inputs


@pytest.mark.parametrize("model_type,lower_case", [("unigram", True), ("bpe", False)])
def test_auto_tokenizer_gives_our_ids_and_the_folder_warm_starts(tmp_path, model_type,
                                                                   lower_case):
  model_file = sentencepiece_models.build_model(str(tmp_path / "vocab"), model_type,
                                                vocab_size=300, lower_case=lower_case)
  ours = tokenization.make_tokenizer(model_file)
  model, inputs = _bert(ours.vocab_size, seed=1)
  directory = export_hf(model, str(tmp_path / "hf"), RunVocab(model_file, lower_case))["bert"]
  expected = [[ours.cls_id] + ids + [ours.sep_id] for ids in ours.tokenize(TEXTS)]
  assert any(ours.unk_id in ids for ids in expected)  # [UNK] (characters not in the corpus) too
  for use_fast, class_name in ((True, "DebertaV2TokenizerFast"), (False, "DebertaV2Tokenizer")):
    theirs = transformers.AutoTokenizer.from_pretrained(directory, use_fast=use_fast)
    assert type(theirs).__name__ == class_name
    assert [theirs(text)["input_ids"] for text in TEXTS] == expected
    pair = theirs(TEXTS[0], TEXTS[1])
    assert pair["input_ids"] == expected[0] + expected[1][1:]
    assert pair["token_type_ids"] == [0] * len(expected[0]) + [1] * (len(expected[1]) - 1)
    assert theirs.convert_tokens_to_ids(list(tokenization.SPECIAL_TOKENS)) == [0, 1, 2, 3, 4]
  # init_checkpoint from the folder: the same outputs.
  restored, _ = _bert(ours.vocab_size, seed=1)
  warm_start_model(restored, directory)
  for part, restored_part in zip(hf_parts(model), hf_parts(restored)):
    for ours_out, theirs_out in zip(our_outputs(part, inputs),
                                    our_outputs(restored_part, inputs)):
      np.testing.assert_allclose(theirs_out, ours_out, atol=1e-6)


def test_bpe_merges_follow_the_merged_piece_ids():
  pieces = ["[PAD]", "a", "b", "c", "\u2581", "ab", "\u2581ab", "abc"]
  assert hf_sentencepiece._bpe_merges(pieces) == [  # pylint: disable=protected-access
      ("a", "b"), ("\u2581", "ab"), ("ab", "c")]
