"""SQuAD v1.1 / v2.0 with XLNet's joint span head, as ELECTRA fine-tuned it, or transformers'.

Model: the encoder's sequence output -> JointSpanHead (`head = 'joint_span'`: start logits;
end logits given the start; beam search at inference; answerability classifier for v2.0), or
SpanEndpointsHead (`head = 'transformers'`: one dense to independent start and end logits,
BERT's and transformers' *ForQuestionAnswering; v2.0's no-answer odds are BERT's null score
against the best span), which `--mode=export_hf` writes as ElectraForQuestionAnswering.
Loss: (CE(start) + CE(end)) / 2, + 0.5 * BCE(answerability) with the joint span head's v2.0
classifier, averaged over the global batch.
Evaluation: n-best post-processing of the beam, official EM/F1 (0-100; HasAns/NoAns and a
dev-tuned no-answer threshold for v2.0), and predictions.json / nbest_predictions.json /
null_odds.json in predictions_dir.
"""
import os
from typing import Dict, Mapping, Optional

import gin
import numpy as np
import tensorflow as tf
import tf_keras

from data.finetuning import squad_features
from data.finetuning import squad_reader
from data.finetuning.create_records import SQUAD_VERSIONS
from data.user_error import UserError
from modeling.heads.joint_span_head import joint_span_loss
from modeling.heads.joint_span_head import JointSpanHead
from modeling.heads.span_endpoints_head import SpanEndpointsHead
from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.transformer_encoder import TransformerEncoder
from modeling.losses.pretraining_losses import weighted_mean
from modeling.models.finetuning_models import QuestionAnsweringModel
from tasks import squad_postprocess
from tasks import squad_scoring
from tasks.finetuning_task import FinetuningData
from tasks.finetuning_task import FinetuningTask
from tasks.protocol import QUESTION_ANSWERING
from tasks.protocol import SavedModelExport
from tasks.protocol import StepResult

# SquadTask.head: XLNet's joint span head (ELECTRA's), or transformers' independent one.
SQUAD_HEADS = ("joint_span", "transformers")


@gin.configurable
class SquadTask(FinetuningTask):
  """SQuAD question answering.

  Args:
    encoder: the encoder's EncoderConfig.
    data: a FinetuningData (records from `create_finetuning_data --task=squad_v1|squad_v2`).
    seed: seeds the head, dropout and data order.
    layerwise_lr_decay: see FinetuningTask.
    electra_off_by_one: see FinetuningTask.
    predictions_dir: where the prediction files go ("" = none).
    head_inner_size: width of the head's hidden layers (ELECTRA: 512).
    beam_size: starts, and ends per start, kept by the beam search (ELECTRA: 20).
    answerability_weight: weight of the answerability loss (ELECTRA: 0.5).
    n_best_size: answers kept per question (ELECTRA: 20).
    max_answer_length: longest answer in word pieces (ELECTRA: 30).
    null_threshold: v2.0: answer "" when the null log-odds exceed this; None tunes it on the
      evaluated set (the dev-set F1 optimum) and reports it as `null_threshold`.
    head: 'joint_span' (ELECTRA's; head_inner_size and answerability_weight apply) or
      'transformers' (one dense to start and end logits; `--mode=export_hf` writes it as
      ElectraForQuestionAnswering; docs/finetune.md, which to choose).

  Metrics (0-100): v1.1 `exact_match`, `f1`; v2.0 `exact`, `f1`, `HasAns_exact`,
  `HasAns_f1`, `NoAns_exact`, `NoAns_f1`, plus `null_threshold`.

  Example:

    >>> import tempfile
    >>> from data.finetuning.create_records import create_squad_data
    >>> from data.finetuning.squad_reader import SquadExample
    >>> from data.finetuning.squad_reader import write_json
    >>> from data.tokenization import make_tokenizer
    >>> # From the repository root: data/sample holds a vocab.
    >>> records = tempfile.mkdtemp()
    >>> questions = os.path.join(records, "questions.json")  # SQuAD v1.1's format
    >>> write_json(questions, [SquadExample("q1", "What was there?", "And there was light.",
    ...                                     answers=(("light", 14),))], "v1.1")
    >>> _ = create_squad_data("squad_v1", make_tokenizer("data/sample/vocab.txt"), records,
    ...                       max_seq_length=16, doc_stride=8, max_query_length=8,
    ...                       train_file=questions, dev_file=questions)
    >>> config = EncoderConfig(vocab_size=7669, hidden_size=16, num_layers=1,
    ...                        intermediate_size=32, embedding_size=8)  # data/sample/vocab.txt
    >>> task = SquadTask(config, FinetuningData(records, train_batch_size=1), head_inner_size=16)
    >>> batch = next(iter(task.build_inputs(is_training=True)))
    >>> # [CLS] what was there ? [SEP] and there was light . [SEP]: "light" is piece 9.
    >>> int(batch["start_positions"][0]), int(batch["end_positions"][0])
    (9, 9)
    >>> result = task.compute_losses(batch, task.build_model()(batch, training=True))
    >>> {name: bool(tf.math.is_finite(loss)) for name, loss in result.losses.items()}
    {'total_loss': True}
  """

  def __init__(self, encoder: EncoderConfig, data: FinetuningData, seed: int = 0,
               layerwise_lr_decay: float = 0.8, electra_off_by_one: bool = False,
               predictions_dir: str = "", head_inner_size: int = 512, beam_size: int = 20,
               answerability_weight: float = 0.5, n_best_size: int = 20,
               max_answer_length: int = 30, null_threshold: Optional[float] = None,
               head: str = "joint_span"):
    super().__init__(encoder, data, seed=seed, layerwise_lr_decay=layerwise_lr_decay,
                     electra_off_by_one=electra_off_by_one, predictions_dir=predictions_dir)
    if self.meta_data["task"] not in SQUAD_VERSIONS:
      raise UserError(f"{data.data_dir} holds {self.meta_data['task']!r} records, not SQuAD")
    self.version_2 = self.meta_data["version"] == "v2.0"
    if null_threshold is not None and not self.version_2:
      raise UserError("null_threshold is for SQuAD v2.0")
    if head not in SQUAD_HEADS:
      raise UserError(f"SquadTask.head = {head!r}; choose one of {list(SQUAD_HEADS)}")
    self.head = head
    self.head_inner_size = head_inner_size
    self.beam_size = beam_size
    self.answerability_weight = answerability_weight
    self.n_best_size = n_best_size
    self.max_answer_length = max_answer_length
    self.null_threshold = null_threshold
    self._eval_examples = None

  def feature_spec(self):
    return squad_features.feature_spec(self.seq_length)

  @property
  def eval_splits(self):
    return ["dev"]

  @property
  def eval_examples(self):
    """The dev examples the dev windows were made from (read once)."""
    if self._eval_examples is None:
      self._eval_examples = squad_reader.read_json(
          os.path.join(self.data.data_dir, self.meta_data["eval_examples_file"]))
    return self._eval_examples

  def build_model(self) -> tf_keras.Model:
    config = self.encoder_config
    if self.head == "transformers":
      return QuestionAnsweringModel(
          TransformerEncoder(config, name="encoder"),
          SpanEndpointsHead(beam_size=self.beam_size, with_answerability=self.version_2,
                            initializer_range=config.initializer_range, name="head"),
          name="question_answering")
    head = JointSpanHead(inner_size=self.head_inner_size, beam_size=self.beam_size,
                         with_answerability=self.version_2,
                         initializer_range=config.initializer_range, name="head")
    return QuestionAnsweringModel(TransformerEncoder(config, name="encoder"), head,
                                  name="question_answering")

  def saved_model_export(self) -> SavedModelExport:
    """`squad`: question and context in, answer spans out (training/serving/export_squad.py)."""
    return SavedModelExport("squad", QUESTION_ANSWERING, needs_vocab=True)

  def hf_head_advice(self) -> str:
    return ("SquadTask.head = 'joint_span' (XLNet's joint span head, ELECTRA's) has no "
            "transformers class: train with SquadTask.head = 'transformers' for "
            "ElectraForQuestionAnswering")

  def compute_losses(self, batch: Mapping[str, tf.Tensor],
                     outputs: Mapping[str, tf.Tensor]) -> StepResult:
    per_window = joint_span_loss(outputs, batch["start_positions"], batch["end_positions"],
                                 batch["is_impossible"],
                                 self.answerability_weight if self.head == "joint_span" else 0.0)
    loss = weighted_mean(per_window, tf.ones_like(per_window))
    return StepResult(total_loss=loss, losses=dict(total_loss=loss), metric_updates={})

  def eval_outputs(self, batch, outputs) -> Dict[str, tf.Tensor]:
    gathered = {key: batch[key] for key in squad_postprocess.WINDOW_FEATURES}
    gathered.update({key: outputs[key] for key in squad_postprocess.BEAM_OUTPUTS})
    if self.version_2:
      gathered["answerability_logits"] = outputs["answerability_logits"]
    return gathered

  def evaluate(self, gathered: Mapping[str, np.ndarray]) -> Dict[str, float]:
    examples = self.eval_examples
    predictions, nbest, null_odds = squad_postprocess.postprocess(
        examples, gathered, self.n_best_size, self.max_answer_length)
    if self.version_2:
      scores = squad_scoring.score_v2(examples, predictions, null_odds, self.null_threshold)
      predictions = squad_postprocess.apply_null_threshold(predictions, null_odds,
                                                           scores["null_threshold"])
    else:
      scores = squad_scoring.score_v1(examples, predictions)
    if self.predictions_dir:
      squad_postprocess.write_prediction_files(self.predictions_dir, predictions, nbest,
                                               null_odds if self.version_2 else None)
    return scores
