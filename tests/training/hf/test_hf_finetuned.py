"""Fine-tuned models to transformers: a tagger, sequence classifiers, a QA model and
multiple-choice models, written
by training/hf/hf_export.py, load into transformers' Auto classes with no missing or
unexpected weights and give our logits on the same inputs.

Weights are scrambled far from initialisation first, so a misplaced or mis-transposed weight
cannot hide. Both encoder shapes are checked where the class allows: ELECTRA's (embedding
width 16 below hidden 32: an embedding projection) and BERT's (embedding width = hidden, no
projection; with BERT's pooler for BertForSequenceClassification).
"""
import json
import re
import os

import numpy as np
import pytest
import tensorflow as tf
import transformers

from data.user_error import UserError
from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.sentence_prediction_head import SentencePredictionHead
from modeling.heads.span_endpoints_head import SpanEndpointsHead
from modeling.heads.token_classification_head import TokenClassificationHead
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.models.finetuning_models import MultipleChoiceModel
from modeling.models.finetuning_models import QuestionAnsweringModel
from modeling.models.finetuning_models import SentencePredictionModel
from modeling.models.finetuning_models import TokenClassificationModel
from modeling.models.model_parts import model_parts
from studies.parity_with_transformers.transformers_peer import load_transformers_weights
from tests.kit.encoders import tiny_encoder
from tests.kit.hf_reference import VOCAB
from tests.kit.hf_reference import scramble_weights
from tests.kit.inputs import tiny_inputs
from tests.kit.paths import SAMPLE_VOCAB
from training.hf.hf_export import export_hf
from training.hf.hf_import import warm_start_model
from training.run_vocab import RunVocab

SEQ = 8
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
ENCODERS = {"electra": {}, "bert": {"embedding_size": 32}}
NO_LOSS_INFO = {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}


def _encoder(shape, output_pooler=False):
  return TransformerEncoder(tiny_encoder(VOCAB, **ENCODERS[shape]), output_pooler=output_pooler,
                            name="encoder")


def _inputs(with_paragraph_mask=False):
  inputs = tiny_inputs(seq=SEQ, vocab=VOCAB)
  if with_paragraph_mask:
    inputs["paragraph_mask"] = tf.ones_like(inputs["input_mask"])
  return inputs


def _choice_inputs(num_choices=3):
  """Two questions of `num_choices` pairs each: int32 [2, num_choices, SEQ]."""
  inputs = tiny_inputs(batch=2 * num_choices, seq=SEQ, vocab=VOCAB)
  return {name: tf.reshape(value, [2, num_choices, SEQ]) for name, value in inputs.items()}


def _exported(model, directory, auto_class, labels=(), problem_type=None):
  """Builds, scrambles and exports `model`; loads the folder with transformers' `auto_class`.

  Returns:
    (the folder, its config.json, the transformers model, its loading info).
  """
  model(_choice_inputs() if isinstance(model, MultipleChoiceModel)
        else _inputs(isinstance(model, QuestionAnsweringModel)), training=False)
  scramble_weights(model.weights, seed=5)
  written = export_hf(model, str(directory), RunVocab(SAMPLE_VOCAB, lower_case=True), labels,
                      problem_type)
  assert len(written) == 1
  folder = next(iter(written.values()))
  config = transformers.AutoConfig.from_pretrained(folder)
  reference = getattr(transformers, "TF" + auto_class).from_config(config)
  reference(reference.dummy_inputs, training=False)
  info = load_transformers_weights(reference, folder)
  with open(os.path.join(folder, "config.json")) as file:
    return folder, json.load(file), reference, info


def _their(reference, inputs):
  return reference(input_ids=inputs["input_word_ids"], attention_mask=inputs["input_mask"],
                   token_type_ids=inputs["input_type_ids"], training=False)


@pytest.mark.parametrize("shape", sorted(ENCODERS))
def test_a_tagger_loads_into_auto_model_for_token_classification(shape, tmp_path):
  model = TokenClassificationModel(_encoder(shape), TokenClassificationHead(len(TAGS)))
  folder, config, reference, info = _exported(model, tmp_path,
                                              "AutoModelForTokenClassification", TAGS)
  assert info == NO_LOSS_INFO
  assert config["architectures"] == ["ElectraForTokenClassification"]
  assert type(reference).__name__ == "TFElectraForTokenClassification"
  assert config["id2label"] == {str(i): tag for i, tag in enumerate(TAGS)}
  assert config["label2id"] == {tag: i for i, tag in enumerate(TAGS)}
  assert reference.config.id2label[1] == "B-PER"
  inputs = _inputs()
  ours = model(inputs, training=False).numpy()
  assert ours.shape == (2, SEQ, len(TAGS)) and ours.std() > 0.1
  np.testing.assert_allclose(_their(reference, inputs).logits.numpy(), ours, atol=1e-5, rtol=0)
  tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
  assert tokenizer.tokenize("In the Beginning") == ["in", "the", "beginning"]


SEQUENCE_HEADS = {
    # name: (encoder shape, pooler, head, architecture)
    "electra_transformers_head": ("electra", False, lambda n: HiddenLayerClassificationHead(
        n, hidden_size=32), "ElectraForSequenceClassification"),
    "bert_shaped_transformers_head": ("bert", False, lambda n: HiddenLayerClassificationHead(
        n, hidden_size=32), "ElectraForSequenceClassification"),
    "bert_pooler": ("bert", True, SentencePredictionHead, "BertForSequenceClassification"),
}


@pytest.mark.parametrize("num_classes", [3, 1], ids=["classification", "regression"])
@pytest.mark.parametrize("name", sorted(SEQUENCE_HEADS))
def test_a_classifier_loads_into_auto_model_for_sequence_classification(name, num_classes,
                                                                        tmp_path):
  shape, pooler, head, architecture = SEQUENCE_HEADS[name]
  model = SentencePredictionModel(_encoder(shape, pooler), head(num_classes))
  labels = ["neg", "neutral", "pos"] if num_classes == 3 else []
  _, config, reference, info = _exported(model, tmp_path,
                                         "AutoModelForSequenceClassification", labels)
  assert info == NO_LOSS_INFO
  assert config["architectures"] == [architecture]
  assert type(reference).__name__ == "TF" + architecture
  if num_classes == 1:
    assert config["problem_type"] == "regression"
    assert config["id2label"] == {"0": "LABEL_0"}
  else:
    assert config["label2id"] == {"neg": 0, "neutral": 1, "pos": 2}
  inputs = _inputs()
  ours = model(inputs, training=False).numpy().reshape(2, num_classes)
  assert ours.std() > 0.1
  np.testing.assert_allclose(_their(reference, inputs).logits.numpy(), ours, atol=1e-5, rtol=0)


def test_a_multi_label_classifier_says_so_in_its_config(tmp_path):
  model = SentencePredictionModel(_encoder("electra"), HiddenLayerClassificationHead(
      3, hidden_size=32))
  labels = ["food", "people", "place"]
  _, config, reference, info = _exported(model, tmp_path, "AutoModelForSequenceClassification",
                                         labels, "multi_label_classification")
  assert info == NO_LOSS_INFO
  assert config["problem_type"] == "multi_label_classification"
  assert reference.config.problem_type == "multi_label_classification"
  assert config["id2label"] == {"0": "food", "1": "people", "2": "place"}
  inputs = _inputs()
  np.testing.assert_allclose(_their(reference, inputs).logits.numpy(),
                             model(inputs, training=False).numpy(), atol=1e-5, rtol=0)


@pytest.mark.parametrize("shape", sorted(ENCODERS))
def test_a_qa_model_loads_into_auto_model_for_question_answering(shape, tmp_path):
  model = QuestionAnsweringModel(_encoder(shape), SpanEndpointsHead(beam_size=3))
  _, config, reference, info = _exported(model, tmp_path, "AutoModelForQuestionAnswering")
  assert info == NO_LOSS_INFO
  assert config["architectures"] == ["ElectraForQuestionAnswering"]
  inputs = _inputs(with_paragraph_mask=True)  # all ones: our logits are transformers'
  ours = model(inputs, training=False)
  theirs = _their(reference, inputs)
  for name in ("start_logits", "end_logits"):
    assert ours[name].numpy().std() > 0.1
    np.testing.assert_allclose(theirs[name].numpy(), ours[name].numpy(), atol=1e-5, rtol=0)


CHOICE_HEADS = {
    # name: (encoder shape, pooler, head, architecture)
    "electra_transformers_head": ("electra", False, lambda: HiddenLayerClassificationHead(
        1, hidden_size=32, input_dropout=False), "ElectraForMultipleChoice"),
    "bert_shaped_transformers_head": ("bert", False, lambda: HiddenLayerClassificationHead(
        1, hidden_size=32, input_dropout=False), "ElectraForMultipleChoice"),
    "bert_pooler": ("bert", True, lambda: SentencePredictionHead(1), "BertForMultipleChoice"),
}


@pytest.mark.parametrize("name", sorted(CHOICE_HEADS))
def test_a_multiple_choice_model_loads_into_auto_model_for_multiple_choice(name, tmp_path):
  shape, pooler, head, architecture = CHOICE_HEADS[name]
  model = MultipleChoiceModel(_encoder(shape, pooler), head())
  _, config, reference, info = _exported(model, tmp_path, "AutoModelForMultipleChoice")
  assert info == NO_LOSS_INFO
  assert config["architectures"] == [architecture]
  assert type(reference).__name__ == "TF" + architecture
  for num_choices in (3, 5):  # any number of choices, as the model is a scorer per choice
    inputs = _choice_inputs(num_choices)
    ours = model(inputs, training=False).numpy()
    assert ours.shape == (2, num_choices) and ours.std() > 0.1
    np.testing.assert_allclose(_their(reference, inputs).logits.numpy(), ours, atol=1e-5,
                               rtol=0)


def test_the_papers_heads_name_no_transformers_class():
  """ELECTRA's GLUE head without a pooler (or over a pooler with embedding width 16 below
  hidden 32: BertConfig has no embedding_size), transformers' ELECTRA head over a pooler,
  XLNet's joint span head, and multiple-choice heads of neither transformers' structure:
  only the encoder."""
  for model in (SentencePredictionModel(_encoder("electra"), SentencePredictionHead(2)),
                SentencePredictionModel(_encoder("electra", output_pooler=True),
                                        SentencePredictionHead(2)),
                SentencePredictionModel(_encoder("electra", output_pooler=True),
                                        HiddenLayerClassificationHead(2, hidden_size=32)),
                QuestionAnsweringModel(_encoder("electra"), JointSpanHead(inner_size=8)),
                MultipleChoiceModel(_encoder("electra"), SentencePredictionHead(1)),
                MultipleChoiceModel(_encoder("electra"),  # transformers' head has no dropout
                                    HiddenLayerClassificationHead(1, hidden_size=32))):
    assert [(part.name, part.architecture) for part in model_parts(model)] == [
        ("encoder", "ElectraModel")]


@pytest.mark.parametrize("kind", ["token", "sequence", "question_answering"])
def test_an_exported_fine_tuned_folder_warm_starts_the_same_model_head_included(kind, tmp_path):
  builders = {
      "token": lambda: TokenClassificationModel(_encoder("electra"),
                                                TokenClassificationHead(len(TAGS))),
      "sequence": lambda: SentencePredictionModel(
          _encoder("electra"), HiddenLayerClassificationHead(3, hidden_size=32)),
      "question_answering": lambda: QuestionAnsweringModel(_encoder("electra"),
                                                           SpanEndpointsHead(beam_size=3)),
  }
  inputs = _inputs(kind == "question_answering")
  exported, fresh = builders[kind](), builders[kind]()
  for model in (exported, fresh):
    model(inputs, training=False)
  scramble_weights(exported.weights, seed=7)
  folder = next(iter(export_hf(exported, str(tmp_path)).values()))
  warm_start_model(fresh, folder)
  ours, theirs = exported(inputs, training=False), fresh(inputs, training=False)
  if kind == "question_answering":
    ours, theirs = ours["start_logits"], theirs["start_logits"]
  np.testing.assert_allclose(theirs.numpy(), ours.numpy(), atol=1e-6, rtol=0)


def test_a_transformers_head_of_other_labels_is_refused_or_left_out(tmp_path):
  exported = TokenClassificationModel(_encoder("electra"), TokenClassificationHead(len(TAGS)))
  exported(_inputs(), training=False)
  scramble_weights(exported.weights, seed=7)
  folder = next(iter(export_hf(exported, str(tmp_path), labels=TAGS).values()))
  reordered = [TAGS[0]] + TAGS[:0:-1]
  fresh = TokenClassificationModel(_encoder("electra"), TokenClassificationHead(len(TAGS)))
  fresh(_inputs(), training=False)
  before = [weight.numpy() for weight in fresh.weights]
  with pytest.raises(UserError, match=re.escape(
      f"TrainerConfig.init_checkpoint={folder}: its head's id2label names the same labels "
      "in another order: ['O', 'B-PER', 'I-PER', 'B-LOC', 'I-LOC'], the records ['O', "
      "'I-LOC', 'B-LOC', 'I-PER', 'B-PER']. Its head's outputs would mean other labels here; "
      "set TrainerConfig.init_head = False")):
    warm_start_model(fresh, folder, labels=reordered)
  for weight, value in zip(fresh.weights, before):  # nothing was loaded
    np.testing.assert_array_equal(weight.numpy(), value)
  warm_start_model(fresh, folder, labels=TAGS)  # the same order loads, head included
  np.testing.assert_array_equal(fresh.head.weights[0].numpy(), exported.head.weights[0].numpy())

  # Three labels: the head cannot fit; init_head = False loads the encoder alone.
  three = TokenClassificationModel(_encoder("electra"), TokenClassificationHead(3))
  three(_inputs(), training=False)
  head_before = [weight.numpy() for weight in three.head.weights]
  with pytest.raises(UserError, match="its head's id2label names 5 labels where the records "
                     "have 3"):
    warm_start_model(three, folder, labels=["O", "B-X", "I-X"])
  warm_start_model(three, folder, labels=["O", "B-X", "I-X"], init_head=False)
  for weight, value in zip(three.head.weights, head_before):
    np.testing.assert_array_equal(weight.numpy(), value)
  np.testing.assert_array_equal(three.encoder.weights[0].numpy(),
                                exported.encoder.weights[0].numpy())
