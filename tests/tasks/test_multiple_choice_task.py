"""Multiple choice: the softmax over a question's choices by hand, the predictions file, a run
that learns, the served text signature against the records, its refusals with the process
alive, and end to end through the runner: train_and_eval, `--mode=export` and
`--mode=export_hf`, which transformers' AutoModelForMultipleChoice loads and answers with our
logits."""
import json
import os

import gin
import numpy as np
import pytest
import tensorflow as tf
import transformers

from data.finetuning.create_records import create_multiple_choice_data
from data.user_error import UserError
from modeling.heads.hidden_layer_classification_head import HiddenLayerClassificationHead
import official_runner
from studies.parity_with_transformers.transformers_peer import load_transformers_weights
from tasks.multiple_choice_task import MultipleChoiceTask
from tests.kit.finetuning import tokenizer
from tests.kit.paths import FINETUNING_VOCAB
from tests.kit.trainers import finetuning_trainer
from tests.kit.trainers import first_and_last_logs
from training.experiment import run_experiment
from training.serving.text_predictors import text_predictor
from training.serving.export_multiple_choice import MultipleChoiceServingModule
from training.serving.text_preprocessing import TextPreprocessor

SEQ = 12
CONFIG = os.path.join(official_runner.REPO_ROOT, "configs", "finetune", "multiple_choice.gin")
# The right choice is what the man ate: bread, wherever it stands.
ROWS = [dict(context="the man ate", question="he ate",
             choices=["bread" if k == i else "the girl" for k in range(3)], label=i)
        for i in range(3)] + [
        dict(context="what did the man eat", choices=["a cake", "bread", "the flute"],
             label=1),
        dict(context="the man ate", choices=["bread", "the plane", "a girl"], label=0)]


def _records(tmp_path):
  folder = tmp_path / "questions"
  folder.mkdir(exist_ok=True)
  files = {}
  for split in ("train", "dev"):
    files[split] = str(folder / f"{split}.jsonl")
    with open(files[split], "w") as f:
      f.write("".join(json.dumps(row) + "\n" for row in ROWS))
  out = str(tmp_path / "records")
  create_multiple_choice_data(tokenizer(), out, SEQ, files)
  return out


def _bindings(data_dir, predictions_dir=""):
  return [f"data_dir = '{data_dir}'", f"predictions_dir = '{predictions_dir}'",
          "train_batch_size = 2", "encoder_config.size = 'tiny'",
          "encoder_config.vocab_size = 100",
          "encoder_config.overrides = {'dropout_rate': 0.0, 'attention_dropout_rate': 0.0}"]


def _task(data_dir, predictions_dir=""):
  gin.clear_config()
  official_runner.parse_config([CONFIG], _bindings(data_dir, predictions_dir))
  task = MultipleChoiceTask()
  gin.clear_config()
  return task


def test_the_loss_is_a_softmax_over_each_questions_choices(tmp_path):
  task = _task(_records(tmp_path))
  assert task.num_choices == 3 and task.head == "transformers"
  logits = tf.constant([[2.0, 0.0, -1.0], [0.0, 0.0, 0.0]])
  result = task.compute_losses(dict(label_ids=tf.constant([0, 1])), logits)
  expected = np.mean([np.log(np.exp([2.0, 0.0, -1.0]).sum()) - 2.0, np.log(3.0)])
  assert float(result.total_loss) == pytest.approx(expected, rel=1e-6)
  # Row 1's three equal logits choose the first: wrong.
  np.testing.assert_array_equal(result.metric_updates["accuracy"]["values"], [100.0, 0.0])


def test_evaluation_reports_accuracy_and_writes_each_questions_probabilities(tmp_path):
  task = _task(_records(tmp_path), str(tmp_path / "predictions"))
  gathered = dict(outputs=np.array([[0.0, 0.0, np.log(2.0)], [1.0, 0.0, 0.0]], np.float32),
                  label_ids=np.array([0, 0]), example_id=np.array([7, 3]))
  assert task.evaluate(gathered) == dict(accuracy=50.0)
  with open(tmp_path / "predictions" / "dev_predictions.tsv") as f:
    rows = f.read().splitlines()
  e = np.e
  assert rows == ["index\tprediction\tlabel\tprobabilities",
                  f"3\t0\t0\t{e / (e + 2):.4f},{1 / (e + 2):.4f},{1 / (e + 2):.4f}",
                  "7\t2\t0\t0.2500,0.2500,0.5000"]


def test_records_of_another_task_or_an_unknown_head_are_refused(tmp_path):
  data_dir = _records(tmp_path)
  gin.clear_config()
  official_runner.parse_config([CONFIG], _bindings(data_dir))
  with pytest.raises(UserError, match="MultipleChoiceTask.head = 'pooler'; choose one of"):
    MultipleChoiceTask(head="pooler")
  gin.clear_config()
  meta_path = os.path.join(data_dir, "meta_data.json")
  with open(meta_path) as f:
    meta_data = json.load(f)
  with open(meta_path, "w") as f:
    json.dump(dict(meta_data, task="classification"), f)
  with pytest.raises(UserError, match="holds 'classification' records, not 'multiple_choice'"):
    _task(data_dir)


def test_the_transformers_head_has_no_dropout_on_cls_and_keeps_that_in_its_config():
  head = HiddenLayerClassificationHead(1, hidden_size=4, dropout_rate=0.5, input_dropout=False)
  vector = tf.ones([64, 4])
  head(vector)
  restored = HiddenLayerClassificationHead.from_config(head.get_config())
  assert restored.input_dropout is False
  # Only the dropout after the hidden layer is left: the dense sees every input.
  hidden = head.dense(vector)
  np.testing.assert_allclose(head.dense(head.dropout(vector, training=False)), hidden)
  assert head.get_config()["input_dropout"] is False


@pytest.mark.slow
def test_a_run_learns_and_its_text_signature_scores_as_the_records_do(tmp_path):
  task = _task(_records(tmp_path))
  trainer = finetuning_trainer(task, learning_rate=1e-2)
  first, last = first_and_last_logs(trainer, 5, rounds=3)
  assert last["total_loss"] < first["total_loss"]
  model = trainer.model
  variables = model.trainable_variables
  batch = next(iter(task.build_inputs(is_training=True)))
  with tf.GradientTape() as tape:
    loss = task.compute_losses(batch, model(batch, training=True)).total_loss
  gradients = dict(zip([v.name for v in variables], tape.gradient(loss, variables)))
  assert any("word_embeddings" in name and g is not None for name, g in gradients.items())
  assert all(g is not None for name, g in gradients.items() if "head" in name)

  module = MultipleChoiceServingModule(model, TextPreprocessor(FINETUNING_VOCAB, True, SEQ), 3)
  served = module.serve_text(context=tf.constant([row["context"] for row in ROWS]),
                             question=tf.constant([row.get("question", "") for row in ROWS]),
                             choices=tf.constant([row["choices"] for row in ROWS]))
  records = next(iter(task.build_inputs(is_training=False)))
  np.testing.assert_allclose(served["logits"].numpy(), model(records, training=False).numpy(),
                             atol=1e-5)
  np.testing.assert_allclose(served["probabilities"].numpy().sum(-1), 1.0, rtol=1e-6)
  assert served["choice"].numpy().tolist() == served["logits"].numpy().argmax(-1).tolist()

  # Bad requests end in one error naming the input; the module answers the next request.
  bad = {
      "context has 2 rows and choices has 1": (["a", "b"], ["", ""], [["x", "y"]]),
      "context has 2 rows and question has 1": (["a", "b"], [""], [["x", "y"], ["x", "y"]]),
      "choices has 1 column\\(s\\); a question needs two or more": (["a"], [""], [["x"]]),
  }
  for message, (context, question, choices) in bad.items():
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
      module.serve_text(context=tf.constant(context), question=tf.constant(question),
                        choices=tf.constant(choices))
  again = module.serve_text(context=tf.constant(["the man ate"]), question=tf.constant([""]),
                            choices=tf.constant([["bread", "a cake"]]))
  assert again["probabilities"].shape == (1, 2)


@pytest.mark.slow
def test_records_through_the_runner_export_a_savedmodel_and_a_transformers_folder(
    tmp_path):
  data_dir = _records(tmp_path)
  model_dir = str(tmp_path / "run")
  gin.clear_config()
  official_runner.parse_config([CONFIG], _bindings(data_dir) + [
      "RuntimeConfig.distribution_strategy = 'default'", "TrainerConfig.steps_per_loop = 2"])
  run_experiment("train_and_eval", model_dir)
  with open(os.path.join(model_dir, "metrics.jsonl")) as f:
    record = [json.loads(line) for line in f][-1]
  # 5 questions x 3 epochs / batch 2 = 8 steps (rounded up), one evaluation at the end.
  assert (record["split"], record["step"]) == ("eval", 8)
  assert record["accuracy"] in (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)

  run_experiment("export", model_dir)
  served = tf.saved_model.load(os.path.join(model_dir, "export", "multiple_choice", "8"))
  answer = served.signatures["serve_text"](
      context=tf.constant(["the man ate"]), question=tf.constant(["he ate"]),
      choices=tf.constant([["the girl", "bread", "the plane", "a cake"]]))
  assert answer["probabilities"].shape == (1, 4)
  # A request of another rank: the graph refuses it, naming the input.
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"choices must be a batch of rows of choices \(rank 2, \[batch, "
                           r"choices\]\); got rank 1"):
    served.signatures["serve_text"](context=tf.constant(["a"]), question=tf.constant([""]),
                                    choices=tf.constant(["x", "y", "z"]))

  run_experiment("export_hf", model_dir)
  folder = os.path.join(model_dir, "export", "hf", "8", "multiple_choice")
  config = transformers.AutoConfig.from_pretrained(folder)
  assert config.architectures == ["ElectraForMultipleChoice"]
  reference = transformers.TFAutoModelForMultipleChoice.from_config(config)
  reference(reference.dummy_inputs, training=False)
  info = load_transformers_weights(reference, folder)
  assert info == {"missing_keys": [], "unexpected_keys": [], "mismatched_keys": []}
  hf_tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
  choices = ["the girl", "bread", "the plane", "a cake"]
  encoded = hf_tokenizer(["the man ate"] * 4, [f"he ate {choice}" for choice in choices],
                         padding="max_length", max_length=SEQ, return_tensors="tf")
  theirs = reference({name: value[tf.newaxis] for name, value in encoded.items()},
                     training=False).logits.numpy()
  np.testing.assert_allclose(theirs, answer["logits"].numpy(), atol=1e-5, rtol=0)

  # --mode=export_tflite: the predictor (LiteRT, tokenizers) answers raw text as serve_text.
  run_experiment("export_tflite", model_dir)
  gin.clear_config()
  predictor = text_predictor(os.path.join(model_dir, "export", "tflite", "8"))
  contexts, questions = ["the man ate", "what did the man eat"], ["he ate", ""]
  rows = [["the girl", "bread", "a cake"], ["a cake", "bread", "the flute and more words"]]
  served = served.signatures["serve_text"](context=tf.constant(contexts),
                                           question=tf.constant(questions),
                                           choices=tf.constant(rows))
  got = predictor(contexts, questions, rows)
  np.testing.assert_allclose(got["probabilities"], served["probabilities"].numpy(), atol=1e-4)
  np.testing.assert_array_equal(got["choice"], served["choice"].numpy())
  with pytest.raises(ValueError, match=r"choices has 1 column\(s\); a question needs two or "
                                       r"more choices"):
    predictor(["a"], [""], [["x"]])
