"""The fine-tuning tasks' transformers-shaped heads (GlueTask.head, SquadTask.head) through
the runner: a run trained with one exports to transformers exactly, a run with the paper's
head is refused in one line that names the option, and nothing is written.
"""
import os

import gin
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizer ops
import transformers

from data.finetuning.create_records import create_glue_data
from data.user_error import UserError
from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
from modeling.heads.span_endpoints_head import SpanEndpointsHead
import official_runner
from studies.parity_with_transformers.transformers_peer import load_transformers_weights
from tasks.glue_task import GlueTask
from tasks.squad_task import SquadTask
from tests.kit import export_models
from tests.kit.finetuning import tokenizer
from tests.kit.finetuning import write_tsv
from training.experiment import run_experiment
from training.serving.export import ExportConfig
from training.serving.export_task import export_for_task

SEQ = 16


@pytest.fixture(scope="module")
def records(tmp_path_factory):
  tmp = tmp_path_factory.mktemp("sst2")
  folder = tmp / "SST-2"
  write_tsv(str(folder / "train.tsv"), ["sentence", "label"],
            [("a good day", 1), ("a bad day", 0)] * 2)
  write_tsv(str(folder / "dev.tsv"), ["sentence", "label"], [("good", 1), ("bad", 0)])
  create_glue_data("sst2", tokenizer(), str(tmp / "records"), SEQ, input_dir=str(folder))
  return str(tmp / "records")


def _configure(records, *extra):
  gin.clear_config()
  official_runner.parse_config(
      [os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "glue_sst2.gin")],
      ["init_checkpoint = ''", f"data_dir = '{records}'", "train_batch_size = 4",
       "encoder_config.size = 'tiny'", "encoder_config.vocab_size = 100",
       "RuntimeConfig.distribution_strategy = 'default'", "TrainerConfig.steps_per_loop = 1",
       "TrainerConfig.summary_interval = 1", "finetuning_steps.epochs = 1"] + list(extra))


@pytest.mark.slow
def test_a_transformers_head_run_exports_our_logits(records, tmp_path):
  model_dir = str(tmp_path / "run")
  _configure(records, "GlueTask.head = 'transformers'")
  run_experiment("train", model_dir)
  run_experiment("export_hf", model_dir)
  folder = os.path.join(model_dir, "export", "hf", "1", "sequence_classification")
  config = transformers.AutoConfig.from_pretrained(folder)
  assert config.id2label == {0: "0", 1: "1"} and config.label2id == {"0": 0, "1": 1}
  reference = transformers.TFAutoModelForSequenceClassification.from_config(config)
  reference(reference.dummy_inputs, training=False)
  info = load_transformers_weights(reference, folder)
  assert info == {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}

  task = gin.get_configurable(GlueTask)()
  model = task.build_model()
  assert isinstance(model.head, HiddenLayerClassificationHead)
  ids = tf.constant([[2, 10, 11, 12, 3, 0, 0, 0], [2, 13, 3, 14, 15, 3, 0, 0]], tf.int32)
  mask = tf.cast(ids > 0, tf.int32)
  types = tf.constant([[0] * 8, [0, 0, 0, 1, 1, 1, 0, 0]], tf.int32)
  inputs = dict(input_word_ids=ids, input_mask=mask, input_type_ids=types)
  model(inputs, training=False)
  tf.train.Checkpoint(model=model).read(
      tf.train.latest_checkpoint(model_dir)).assert_existing_objects_matched()
  ours = model(inputs, training=False).numpy()
  theirs = reference(input_ids=ids, attention_mask=mask, token_type_ids=types,
                     training=False).logits.numpy()
  np.testing.assert_allclose(theirs, ours, atol=1e-5, rtol=0)
  tokenizer_ = transformers.AutoTokenizer.from_pretrained(folder)
  assert tokenizer_.tokenize("a good day") == ["a", "good", "day"]


def test_a_paper_head_run_is_refused_in_one_line_naming_the_option(records, tmp_path):
  model_dir = str(tmp_path / "run")
  _configure(records)
  run_experiment("train", model_dir)
  with pytest.raises(UserError) as raised:
    run_experiment("export_hf", model_dir)
  assert str(raised.value).splitlines()[0] == (
      "--mode=export_hf: GlueTask.head = 'paper' (ELECTRA's head: [CLS], dropout, dense) has "
      "no transformers class: train with GlueTask.head = 'transformers' for "
      "ElectraForSequenceClassification, or with TransformerEncoder.output_pooler = True (and "
      "embedding_size == hidden_size) for BertForSequenceClassification")
  assert not os.path.exists(os.path.join(model_dir, "export"))


def test_a_paper_head_over_a_pooler_is_bert_for_sequence_classification(records):
  bert_shaped = "encoder_config.overrides = {'embedding_size': 32}"
  _configure(records, "TransformerEncoder.output_pooler = True", bert_shaped)
  task = gin.get_configurable(GlueTask)()
  assert task.hf_export_refusal(task.build_model()) is None
  # BertConfig has no embedding_size: an ELECTRA-shaped encoder with a pooler is refused.
  _configure(records, "TransformerEncoder.output_pooler = True")
  task = gin.get_configurable(GlueTask)()
  model = task.build_model()
  config = model.encoder.config
  assert task.hf_export_refusal(model) == (  # the pooler it has is not advised again
      "--mode=export_hf: GlueTask.head = 'paper' over BERT's pooler is "
      "BertForSequenceClassification, whose BertConfig has no embedding_size: this encoder's "
      f"embedding_size {config.embedding_size} differs from its hidden_size "
      f"{config.hidden_size}. Train with encoder_config.overrides = {{'embedding_size': "
      f"{config.hidden_size}}} for BertForSequenceClassification, or with GlueTask.head = "
      "'transformers' and no pooler for ElectraForSequenceClassification")
  _configure(records, "TransformerEncoder.output_pooler = True",
             "GlueTask.head = 'transformers'")
  task = gin.get_configurable(GlueTask)()
  assert task.hf_export_refusal(task.build_model()) == (
      "--mode=export_hf: GlueTask.head = 'transformers' over an encoder with a pooler "
      "(TransformerEncoder.output_pooler = True) has no transformers class: train it without "
      "the pooler for ElectraForSequenceClassification")


def test_an_unknown_head_is_a_user_error(records, tmp_path):
  _configure(records)
  with pytest.raises(UserError, match=r"GlueTask.head = 'pooler'; choose one of \['paper', "
                     r"'transformers'\]"):
    gin.get_configurable(GlueTask)(head="pooler")
  with pytest.raises(UserError, match=r"SquadTask.head = 'dense'; choose one of "
                     r"\['joint_span', 'transformers'\]"):
    export_models.squad_task(str(tmp_path), head="dense")


@pytest.mark.slow
def test_squads_transformers_head_trains_evaluates_and_serves(tmp_path):
  task = export_models.squad_task(str(tmp_path), head="transformers")
  assert task.hf_export_refusal(task.build_model()) is None
  assert export_models.squad_task(str(tmp_path)).hf_export_refusal(
      export_models.squad_task(str(tmp_path)).build_model()) == (
          "--mode=export_hf: SquadTask.head = 'joint_span' (XLNet's joint span head, ELECTRA's) "
          "has no transformers class: train with SquadTask.head = 'transformers' for "
          "ElectraForQuestionAnswering")
  model = export_models.built_model(task)
  assert isinstance(model.head, SpanEndpointsHead)
  batch = task.dummy_batch(2)
  batch.update(start_positions=tf.constant([3, 0]), end_positions=tf.constant([5, 0]),
               is_impossible=tf.constant([0, 1]))
  outputs = model(dict(batch, input_mask=tf.ones_like(batch["input_word_ids"]),
                       paragraph_mask=tf.ones_like(batch["input_word_ids"])), training=True)
  loss = task.compute_losses(batch, outputs).total_loss
  # (CE(start) + CE(end)) / 2 with no answerability term: the head has no weights for it.
  expected = np.mean([(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=batch[name][row:row + 1], logits=outputs[logits][row:row + 1]).numpy()[0])
                      for row in range(2) for name, logits in
                      (("start_positions", "start_logits"), ("end_positions", "end_logits"))])
  assert float(loss) == pytest.approx(expected, rel=1e-5)
  paths = export_for_task(task, model, str(tmp_path), 1,
                          ExportConfig(vocab_file=export_models.VOCAB_FILE))
  squad = tf.saved_model.load(paths["squad"]).signatures["serve_text"]
  outputs = squad(question=tf.constant(["Who wept?"]), context=tf.constant(["Jesus wept."]))
  assert outputs["answer_text"].shape == [1] and outputs["no_answer_log_odds"].shape == [1]
