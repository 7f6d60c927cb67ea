"""TEAMS against Model Garden's: the same weights, masks and samples give the same losses.

The referee is tf-models-official's `official/projects/teams` (`TeamsPretrainer`,
`MultiWordSelectionHead`, `TeamsPretrainTask.build_losses`), imported module by module: its
experiment file does not import on Python 3.11. Both models are built at tiny sizes (L4 H32
A2 E16, generator 2 layers with the bottom one shared, K = 5 negatives), our weights are set
far from initialisation and copied into Model Garden's by role, and both see the same batch:
[MASK] at the masked positions, a weight-0 padding prediction at position 0, padded tokens.
Model Garden draws its replacements and negatives with stateful `tf.random` ops; the test
replaces its two samplers (`electra_pretrainer.sample_from_softmax`,
`teams_pretrainer.sample_k_from_softmax`) with ours' draws, so everything after sampling is
Model Garden's own code: unmasking and corrupting the input, RTD labels, the candidate set,
both heads and the three losses. The MLM, RTD and MWS losses (and eq. 9's total) must agree
within 1e-5 and the total's gradient w.r.t. every shared weight within 1e-4.

Where Model Garden differs on purpose, the test compares where both agree:
- RTD branch: Model Garden feeds each extra layer the same input (not chained); with one
  task-specific layer (the paper's k = 1) chained and not chained are the same.
- Its "gelu" is the tanh approximation (`official.modeling.activations.gelu`); ours, like
  transformers' "gelu", is exact. The test builds Model Garden's layers with the exact one.
- Its E -> H embedding projection has no bias; ours has one (transformers' `embeddings_project`
  has one). Ours is set to zero and left out of the gradient comparison.
- Its generator ties the whole embedding network here (TEAMS; its ELECTRA ties only the word
  table), as ours does: the comparison covers that sharing and the shared bottom layer.
- Candidate order: Model Garden puts the original first (label 0); ours shuffles the set and
  labels the original's index. Model Garden gets our candidates with the original moved
  first; the loss does not depend on the order, and logits are compared after the same move.
- Normalisation: both divide each loss by its token count (masked_lm_weights, input_mask)
  over the batch; on N replicas Model Garden averages per-replica means, ours divides by the
  global count (equal on one replica, compared here, so no rescale).
"""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from official.modeling import activations as mg_activations
from official.nlp.configs import encoders as mg_encoders
from official.nlp.modeling.models import electra_pretrainer as mg_electra
from official.projects.teams import teams as mg_teams
from official.projects.teams import teams_pretrainer as mg_teams_pretrainer
from official.projects.teams import teams_task as mg_teams_task

from tasks.pretraining_task import PretrainingData
from tasks.teams_pretraining import TeamsPretrainingTask
from tests.kit.encoders import tiny_encoder

VOCAB, SEQ, LAYERS, NEGATIVES, MASK_ID = 40, 8, 4, 5, 4


def _batch():
  """2 sequences of 8; row 0 ends in 2 padding tokens and has a weight-0 prediction."""
  rng = np.random.default_rng(0)
  word_ids = rng.integers(5, VOCAB, size=(2, SEQ)).astype(np.int32)
  input_mask = np.ones((2, SEQ), np.int32)
  input_mask[0, -2:] = 0
  word_ids[0, -2:] = 0
  positions = np.array([[1, 3, 0], [2, 5, 6]], np.int32)
  weights = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], np.float32)
  original_ids = np.take_along_axis(word_ids, positions, axis=1) * (weights > 0)
  for b, p in zip(*np.nonzero(weights)):
    word_ids[b, positions[b, p]] = MASK_ID
  type_ids = np.zeros((2, SEQ), np.int32)
  type_ids[:, SEQ // 2:] = 1
  return {name: tf.constant(value) for name, value in dict(
      input_word_ids=word_ids, input_mask=input_mask, input_type_ids=type_ids,
      masked_lm_positions=positions, masked_lm_ids=original_ids.astype(np.int32),
      masked_lm_weights=weights, sampling_seeds=np.array([[7, 0], [7, 1]], np.int32)).items()}


def _ours(config, batch):
  data = PretrainingData(train_file_pattern="unused", seq_length=SEQ,
                         max_predictions_per_seq=3, train_batch_size=2, eval_batch_size=2)
  task = TeamsPretrainingTask(config, data, num_negatives=NEGATIVES)
  model = task.build_model()
  model(batch, training=False)
  rng = np.random.default_rng(1)
  for variable in model.weights:  # far from initialisation, LayerNorm gammas around 1
    noise = rng.normal(0.0, 0.2, variable.shape)
    if "gamma" in variable.name:
      noise += 1.0
    variable.assign(noise.astype(np.float32))
  model.encoder.embedding_projection.bias.assign(tf.zeros([config.hidden_size]))
  return task, model


def _model_garden(config, monkeypatch):
  """Model Garden's TeamsPretrainer and task at `config`'s sizes, exact GELU."""
  monkeypatch.setattr(mg_activations, "gelu",
                      lambda x: tf_keras.activations.gelu(x, approximate=False))
  def encoder(num_layers):
    return mg_encoders.BertEncoderConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size, num_layers=num_layers,
        num_attention_heads=config.num_attention_heads, hidden_activation="gelu",
        intermediate_size=config.intermediate_size, dropout_rate=0.0,
        attention_dropout_rate=0.0, max_position_embeddings=config.max_sequence_length,
        type_vocab_size=config.type_vocab_size, embedding_size=config.embedding_size)
  model_config = mg_teams.TeamsPretrainerConfig(
      candidate_size=NEGATIVES + 1, num_shared_generator_hidden_layers=1,
      num_discriminator_task_agnostic_layers=LAYERS - 1,
      generator=encoder(LAYERS // 2), discriminator=encoder(LAYERS))
  task = mg_teams_task.TeamsPretrainTask(mg_teams_task.TeamsPretrainTaskConfig(
      model=model_config))
  return task, task.build_model()


def _block_pairs(ours, theirs):
  """Two TransformerEncoderBlocks' variables, matched by name within the block."""
  pairs = list(zip(ours.weights, theirs.weights))
  for our_weight, their_weight in pairs:
    assert our_weight.name.split("/")[-2:] == their_weight.name.split("/")[-2:], (
        our_weight.name, their_weight.name)
  return pairs


def _shared_weights(ours, theirs):
  """(our variable, Model Garden's variable) for every weight both models have."""
  embeddings = ours.encoder.embedding_network
  their_embeddings = theirs.discriminator_mws_network.embedding_network
  pairs = [
      (embeddings.embedding_table, their_embeddings.get_layer("word_embeddings").embeddings),
      (embeddings.position_embeddings.weights[0],
       their_embeddings.get_layer("position_embedding").weights[0]),
      (embeddings.type_embeddings.embeddings,
       their_embeddings.get_layer("type_embeddings").embeddings),
      (embeddings.layer_norm.gamma, their_embeddings.get_layer("embeddings/layer_norm").gamma),
      (embeddings.layer_norm.beta, their_embeddings.get_layer("embeddings/layer_norm").beta),
      (ours.encoder.embedding_projection.kernel,
       their_embeddings.get_layer("embedding_projection").kernel)]
  their_layers = theirs.discriminator_mws_network.hidden_layers
  for our_layer, their_layer in zip(ours.encoder.transformer_layers, their_layers):
    pairs += _block_pairs(our_layer, their_layer)
  assert theirs.generator_network.hidden_layers[0] is their_layers[0]  # shared, as ours
  pairs += _block_pairs(ours.generator.transformer_layers[1],
                        theirs.generator_network.hidden_layers[1])
  generator_head, their_generator_head = ours.generator_mlm_head, theirs.masked_lm
  rtd, their_rtd = ours.rtd_head, theirs.discriminator_rtd_head
  mws, their_mws = ours.mws_head, theirs.discriminator_mws_head
  pairs += _block_pairs(rtd.transformer_layers[0], their_rtd.hidden_layers[0])
  for ours_layer, their_layer in [
      (generator_head.dense, their_generator_head.dense),
      (generator_head.layer_norm, their_generator_head.layer_norm),
      (rtd.projection.dense, their_rtd.dense), (rtd.projection.logit, their_rtd.rtd_head),
      (mws.dense, their_mws.dense), (mws.layer_norm, their_mws.layer_norm)]:
    pairs += list(zip(ours_layer.weights, their_layer.weights))
  pairs.append((generator_head.output_bias, their_generator_head.bias))
  return pairs


def test_teams_matches_model_garden_losses_and_gradients(monkeypatch):
  config = tiny_encoder(VOCAB, num_layers=LAYERS)
  batch = _batch()
  task, model = _ours(config, batch)
  with tf.GradientTape() as tape:
    outputs = model(batch, training=True)
    step = task.compute_losses(batch, outputs)

  # Model Garden gets our draws: the replacements, and the negatives with the original first.
  labels = outputs["mws_labels"].numpy()
  order = np.array([[[label] + [i for i in range(NEGATIVES + 1) if i != label]
                     for label in row] for row in labels])
  candidates = np.take_along_axis(outputs["candidate_ids"].numpy(), order, axis=-1)
  sampled_ids = outputs["sampled_ids"]

  def sample_from_softmax(logits, disallow=None):
    assert disallow is None
    return tf.one_hot(sampled_ids, logits.shape[-1])

  def sample_k_from_softmax(logits, k, disallow=None):
    assert k == NEGATIVES and disallow is not None
    return tf.constant(candidates[..., 1:])

  monkeypatch.setattr(mg_electra, "sample_from_softmax", sample_from_softmax)
  monkeypatch.setattr(mg_teams_pretrainer, "sample_k_from_softmax", sample_k_from_softmax)
  mg_task, mg_model = _model_garden(config, monkeypatch)
  mg_model(batch)  # builds it
  pairs = _shared_weights(model, mg_model)
  for ours, theirs in pairs:
    theirs.assign(ours)
  # Every Model Garden weight has its counterpart but the two poolers, which no loss reads.
  unpaired = {id(v) for v in mg_model.trainable_variables} - {id(t) for _, t in pairs}
  assert sorted(v.name for v in mg_model.trainable_variables if id(v) in unpaired) == [
      "cls_transform/bias:0", "cls_transform/bias:0",
      "cls_transform/kernel:0", "cls_transform/kernel:0"]
  unpaired = {id(v) for v in model.trainable_variables} - {id(o) for o, _ in pairs}
  assert unpaired == {id(model.encoder.embedding_projection.bias)}

  with tf.GradientTape() as mg_tape:
    mg_outputs = mg_model(batch)
    metrics = mg_task.build_metrics()
    mg_total = mg_task.build_losses(labels=batch, model_outputs=mg_outputs, metrics=metrics)
  mg_losses = {metric.name: float(metric.result()) for metric in metrics}

  np.testing.assert_allclose(mg_outputs["lm_outputs"], outputs["mlm_logits"], atol=1e-5)
  np.testing.assert_array_equal(mg_outputs["disc_rtd_label"], outputs["rtd_labels"])
  assert int(tf.reduce_sum(outputs["rtd_labels"])) > 0  # some tokens were replaced
  np.testing.assert_allclose(mg_outputs["disc_rtd_logits"], outputs["rtd_logits"], atol=1e-5)
  np.testing.assert_allclose(
      mg_outputs["disc_mws_logits"],
      np.take_along_axis(outputs["mws_logits"].numpy(), order, axis=-1), atol=1e-5)
  for ours, theirs in [("masked_lm_loss", "masked_lm_loss"),
                       ("disc_loss", "replaced_token_detection_loss"),
                       ("mws_loss", "multiword_selection_loss"),
                       ("total_loss", "total_loss")]:
    assert float(step.losses[ours]) > 0.1, ours
    np.testing.assert_allclose(mg_losses[theirs], float(step.losses[ours]), atol=1e-5,
                               rtol=0, err_msg=ours)
  np.testing.assert_allclose(float(mg_total), float(step.total_loss), atol=1e-5, rtol=0)

  our_grads = tape.gradient(step.total_loss, [ours for ours, _ in pairs])
  their_grads = mg_tape.gradient(mg_total, [theirs for _, theirs in pairs])
  for (ours, _), our_grad, their_grad in zip(pairs, our_grads, their_grads):
    our_grad, their_grad = tf.convert_to_tensor(our_grad), tf.convert_to_tensor(their_grad)
    if "key/bias" not in ours.name:  # softmax ignores a shift of all logits: no gradient
      assert float(tf.reduce_max(tf.abs(our_grad))) > 1e-6, ours.name
    np.testing.assert_allclose(their_grad, our_grad, atol=1e-4, rtol=0, err_msg=ours.name)
