"""The Electric encoder export: the encoder's signatures plus `score`.

`score`(text: string [batch]) returns `score` float32 [batch], Electric's one-pass sentence
score -sum_t E(x)_t over the text's pieces ([CLS], [SEP] and padding left out;
modeling/heads/energy_head.py `energy_score`: the paper's pseudo-log-likelihood, the
partition functions taken as 1; higher = more plausible), and `num_tokens` int32 [batch]
(the pieces summed over, to normalise by length). A text longer than S - 2 pieces is refused
(an InvalidArgumentError naming its row: "text row 2 has 40 word pieces; this model scores at
most 30 a row ..."): its score would be its first pieces' alone.
"""
import tensorflow as tf

from modeling.heads.energy_head import cloze_candidates
from modeling.heads.energy_head import energy_score
from modeling.models.electric import ElectricPretrainer
from training.serving.export import EncoderServingModule
from training.serving.export import text_spec
from training.serving.text_preprocessing import TextPreprocessor


class ElectricServingModule(EncoderServingModule):
  """EncoderServingModule of an ElectricPretrainer's discriminator, with its energy head.

  Args:
    pretrainer: the ElectricPretrainer.
    preprocessor: a TextPreprocessor (`score` takes raw text).
  """

  def __init__(self, pretrainer: ElectricPretrainer, preprocessor: TextPreprocessor):
    super().__init__(pretrainer.encoder, preprocessor.seq_length, preprocessor)
    self.energy_head = pretrainer.rtd_head

  @tf.function(input_signature=[text_spec("text")])
  def score(self, text):
    inputs = self.preprocessor.pack_whole(text, "scores")
    sequence_output = self.encoder(inputs, training=False)["sequence_output"]
    weights = cloze_candidates(inputs["input_mask"], inputs["input_type_ids"])
    return {"score": energy_score(self.energy_head(sequence_output), weights),
            "num_tokens": tf.cast(tf.reduce_sum(weights, axis=-1), tf.int32)}

  def signatures(self):
    return dict(super().signatures(), score=self.score)
