"""Model Garden's ELECTRA pretraining step at an ElectraPretrainingTask's dimensions.

The baseline of `python -m bench.throughput --vs_model_garden`: Model Garden's own
`official.nlp.tasks.electra_task.ElectraPretrainTask` (its `build_model`, `build_metrics` and
`train_step`: forward, MLM + lambda * RTD loss, gradients, optimizer update, metrics) on
`official.nlp.modeling.models.ElectraPretrainer`, configured as the task is:

- discriminator: Model Garden's BertEncoder with the task's L, H, heads, FFN, embedding
  width E (so the E->H projection too), vocabulary, positions and dropout;
- generator: a BertEncoder at the task's generator size (same scaled_config as ours), that
  shares the discriminator's word-embedding table (Model Garden ties only that table);
- the same masked positions and batch, no next-sentence head loss (its data has no label),
  the task's RTD weight (lambda = 50).

Under a mixed-precision policy Model Garden's ElectraPretrainer does not run as it is: its
MLM logits come out in bfloat16/float16 and meet float32 Gumbel noise, and its RTD logits
meet float32 labels in its loss (both raise a dtype error). `float32_heads` rebuilds those
two layers in float32, as ours are; nothing else changes.

It runs in an orbit.StandardTrainer loop as Model Garden's base trainer does (strategy.run of
the task's train_step, the loss metric, steps in a tf.function loop), with the optimizer our
trainer gets (bench/pretraining_setup.py builds it from the same gin config), so the two
differ only in their models and train steps. `--jit`: Model Garden's trainer compiles its
whole train_step with XLA (official/core/base_trainer.py); so does this one.
"""
import orbit
import tensorflow as tf
import tf_keras
from official.nlp.configs import electra as electra_configs
from official.nlp.configs import encoders
from official.nlp.data import pretrain_dataloader
from official.nlp.modeling import layers as nlp_layers
from official.nlp.modeling import models
from official.nlp.tasks import electra_task

from modeling.layers.encoder_config import EncoderConfig
from modeling.layers.encoder_config import scaled_config


def bert_encoder_config(config: EncoderConfig) -> encoders.EncoderConfig:
  """Model Garden's BertEncoder config with an EncoderConfig's dimensions."""
  if config.relative_position != "none":
    raise ValueError(f"Model Garden's BertEncoder has no relative_position="
                     f"{config.relative_position!r}: compare without it")
  return encoders.EncoderConfig(type="bert", bert=encoders.BertEncoderConfig(
      vocab_size=config.vocab_size, hidden_size=config.hidden_size,
      num_layers=config.num_layers, num_attention_heads=config.num_attention_heads,
      hidden_activation=config.activation, intermediate_size=config.intermediate_size,
      dropout_rate=config.dropout_rate, attention_dropout_rate=config.attention_dropout_rate,
      max_position_embeddings=config.max_sequence_length,
      type_vocab_size=config.type_vocab_size, initializer_range=config.initializer_range,
      embedding_size=config.embedding_size))


def model_garden_task(task) -> electra_task.ElectraPretrainTask:
  """Model Garden's ElectraPretrainTask at `task`'s (an ElectraPretrainingTask) dimensions."""
  generator = scaled_config(task.encoder_config,
                            width_multiplier=task.generator_width_multiplier)
  data = task.data
  model = electra_configs.ElectraPretrainerConfig(
      num_masked_tokens=data.max_predictions_per_seq, sequence_length=data.seq_length,
      discriminator_loss_weight=task.rtd_weight, tie_embeddings=True,
      generator_encoder=bert_encoder_config(generator),
      discriminator_encoder=bert_encoder_config(task.encoder_config), cls_heads=[])
  train_data = pretrain_dataloader.BertPretrainDataConfig(
      global_batch_size=data.train_batch_size, seq_length=data.seq_length,
      max_predictions_per_seq=data.max_predictions_per_seq, use_next_sentence_label=False)
  return electra_task.ElectraPretrainTask(
      electra_task.ElectraPretrainConfig(model=model, train_data=train_data))


def float32_heads(model: models.ElectraPretrainer):
  """Rebuilds the generator's MaskedLM and the RTD logit layer of `model` in float32.

  Call before the model is built. MaskedLM makes its inner layers when it is built, so it
  is built here, under a float32 global policy.
  """
  policy = tf_keras.mixed_precision.global_policy()
  masked_lm = model.masked_lm
  tf_keras.mixed_precision.set_global_policy("float32")
  try:
    model.masked_lm = nlp_layers.MaskedLM(
        embedding_table=masked_lm.embedding_table, activation=masked_lm.activation,
        initializer=masked_lm.initializer, output=masked_lm._output_type,  # pylint: disable=protected-access
        name=masked_lm.name)
    model.masked_lm.build(None)
  finally:
    tf_keras.mixed_precision.set_global_policy(policy)
  head = model.discriminator_head
  model.discriminator_head = tf_keras.layers.Dense(
      units=1, kernel_initializer=head.kernel_initializer, dtype="float32", name=head.name)


class ModelGardenElectraTrainer(orbit.StandardTrainer):
  """Model Garden's ELECTRA train step in an orbit loop (create inside strategy.scope()).

  Args:
    task: the ElectraPretrainingTask whose dimensions to copy.
    optimizer: a fresh optimizer (not shared with another model).
    strategy: the tf.distribute strategy.
    train_dataset: a distributed dataset or iterator of the task's batches.
    jit_compile: compile Model Garden's whole train_step with XLA.

  Attributes:
    model: Model Garden's ElectraPretrainer.
  """

  def __init__(self, task, optimizer, strategy: tf.distribute.Strategy, train_dataset,
               jit_compile: bool = False):
    self.garden_task = model_garden_task(task)
    self.model = self.garden_task.build_model()
    if tf_keras.mixed_precision.global_policy().compute_dtype != "float32":
      float32_heads(self.model)
    self.optimizer = optimizer
    self.strategy = strategy
    self.metrics = self.garden_task.build_metrics(training=True)
    self.train_loss = tf_keras.metrics.Mean("training_loss")
    # Variables and optimizer slots are made now, not inside the (possibly XLA) step.
    self.model(task.dummy_batch(), training=False)
    self.optimizer._create_all_weights(self.model.trainable_variables)  # pylint: disable=protected-access
    self._train_step = self.garden_task.train_step
    if jit_compile:
      self._train_step = tf.function(self._train_step, jit_compile=True)
    super().__init__(train_dataset)

  def train_loop_begin(self):
    for metric in self.metrics + [self.train_loss]:
      metric.reset_state()

  def train_step(self, iterator):
    def step_fn(inputs):
      logs = self._train_step(inputs, model=self.model, optimizer=self.optimizer,
                              metrics=self.metrics)
      self.train_loss.update_state(logs[self.garden_task.loss])

    self.strategy.run(step_fn, args=(next(iterator),))

  def train_loop_end(self):
    return {"total_loss": float(self.train_loss.result())}
