"""The SCRIPT encoder export: the encoder's signatures plus `score`.

`score`(text: string [batch]) returns `pseudo_log_likelihood` float32 [batch] (SCRIPT's
equation 7: the sum over the packed tokens, [CLS] and [SEP] included, of log p(t+ | x), one
forward pass; higher = more plausible) and `num_tokens` int32 [batch] (packed tokens
summed over, to normalise by length). A text longer than S - 2 pieces is refused (an
InvalidArgumentError naming its row: "text row 2 has 40 word pieces; this model scores at
most 30 a row ..."): its score would be its first pieces' alone.
"""
import tensorflow as tf

from modeling.heads.self_critic import pseudo_log_likelihood
from modeling.models.script import ScriptPretrainer
from modeling.models.script import all_positions
from training.serving.export import EncoderServingModule
from training.serving.export import text_spec
from training.serving.text_preprocessing import TextPreprocessor


class ScriptServingModule(EncoderServingModule):
  """EncoderServingModule of a ScriptPretrainer's encoder, with its MLM head for `score`.

  Args:
    pretrainer: the ScriptPretrainer.
    preprocessor: a TextPreprocessor (`score` takes raw text).
  """

  def __init__(self, pretrainer: ScriptPretrainer, preprocessor: TextPreprocessor):
    super().__init__(pretrainer.encoder, preprocessor.seq_length, preprocessor)
    self.masked_lm_head = pretrainer.masked_lm_head

  @tf.function(input_signature=[text_spec("text")])
  def score(self, text):
    inputs = self.preprocessor.pack_whole(text, "scores")
    sequence_output = self.encoder(inputs, training=False)["sequence_output"]
    vocab_logits = self.masked_lm_head(sequence_output, all_positions(inputs["input_word_ids"]))
    return {"pseudo_log_likelihood": pseudo_log_likelihood(vocab_logits, inputs["input_mask"]),
            "num_tokens": tf.reduce_sum(inputs["input_mask"], axis=-1)}

  def signatures(self):
    return dict(super().signatures(), score=self.score)
