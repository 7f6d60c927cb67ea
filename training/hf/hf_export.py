"""Writes our models as HuggingFace transformers checkpoints (`--mode=export_hf`).

Each part (training/hf/hf_parts.py) becomes one folder that `<Architecture>.from_pretrained`
loads with no missing or unexpected weights:
  config.json              ElectraConfig / BertConfig fields, `architectures`; a fine-tuned
                           classifier's `id2label`, `label2id` (and `problem_type:
                           regression` for one output)
  model.safetensors        transformers' parameter names and PyTorch layouts, float32
  vocab.txt, tokenizer_config.json, special_tokens_map.json   (when a WordPiece vocab is known)
  spm.model, tokenizer.json, tokenizer_config.json, special_tokens_map.json   (a SentencePiece
                           model: DebertaV2Tokenizer(Fast), training/hf/hf_sentencepiece.py)

The generator is written with its own copy of the tied embeddings, as transformers keeps
generator and discriminator as two models. A part a model names in
`parts_without_transformers_class()` (Electric's two-tower generator) is not written; the
export logs one line saying so.

A fine-tuned model is one part, its encoder with its task head (token classification,
sequence classification with transformers' head or BERT's pooler, question answering with
transformers' head: modeling/models/model_parts.py); the runner refuses a fine-tuning run
whose head transformers has no class for (the task's `hf_export_refusal`).
"""
import json
import os
from typing import Dict, Optional, Sequence

from absl import logging
from safetensors.numpy import save as safetensors_bytes
import tensorflow as tf

from data import tokenization
from data.user_error import UserError
from training.hf import hf_sentencepiece
from training.hf.hf_parts import HfPart
from training.hf.hf_parts import hf_parts
from training.run_vocab import RunVocab

# tf_keras activation names -> transformers' ACT2FN names.
_HF_ACTIVATIONS = {"gelu": "gelu", "relu": "relu", "tanh": "tanh", "swish": "silu",
                   "silu": "silu"}


def hf_config(part: HfPart) -> Dict:
  """The config.json of one part (ElectraConfig or BertConfig fields).

  Raises:
    ValueError: an activation transformers does not name the same way.
  """
  config = part.config
  if config.activation not in _HF_ACTIVATIONS:
    raise ValueError(f"activation {config.activation!r} has no transformers name; known: "
                     f"{sorted(_HF_ACTIVATIONS)}")
  fields = dict(
      architectures=[part.architecture], model_type=part.model_type,
      vocab_size=config.vocab_size, hidden_size=config.hidden_size,
      num_hidden_layers=config.num_layers, num_attention_heads=config.num_attention_heads,
      intermediate_size=config.intermediate_size,
      hidden_act=_HF_ACTIVATIONS[config.activation],
      hidden_dropout_prob=config.dropout_rate,
      attention_probs_dropout_prob=config.attention_dropout_rate,
      max_position_embeddings=config.max_sequence_length,
      type_vocab_size=config.type_vocab_size, initializer_range=config.initializer_range,
      layer_norm_eps=config.norm_epsilon, pad_token_id=0,
      position_embedding_type="absolute", torch_dtype="float32")
  if part.model_type == "electra":
    fields.update(embedding_size=config.embedding_size, summary_type="first",
                  summary_use_proj=True, summary_activation="gelu",
                  summary_last_dropout=0.1)
  if part.num_labels is not None:
    names = part.label_names()
    fields.update(id2label={str(index): name for index, name in enumerate(names)},
                  label2id={name: index for index, name in enumerate(names)})
    if part.problem_type:
      fields.update(problem_type=part.problem_type)
    elif part.num_labels == 1:
      fields.update(problem_type="regression")
  return fields


def tokenizer_files(part: HfPart, lower_case: bool, max_length: int) -> Dict[str, Dict]:
  """tokenizer_config.json and special_tokens_map.json for a WordPiece vocab."""
  pad, unk, cls, sep, mask = tokenization.SPECIAL_TOKENS
  special = dict(pad_token=pad, unk_token=unk, cls_token=cls, sep_token=sep, mask_token=mask)
  tokenizer_class = "BertTokenizer" if part.model_type == "bert" else "ElectraTokenizer"
  return {
      "tokenizer_config.json": dict(
          special, tokenizer_class=tokenizer_class, do_lower_case=lower_case,
          strip_accents=None, tokenize_chinese_chars=True, model_max_length=max_length),
      "special_tokens_map.json": special,
  }


def _write_json(path: str, content: Dict) -> None:
  with tf.io.gfile.GFile(path, "w") as file:
    file.write(json.dumps(content, indent=2, sort_keys=True) + "\n")


def export_part(part: HfPart, output_dir: str, vocab: Optional[RunVocab] = None) -> str:
  """Writes one part as a transformers checkpoint folder and returns the folder.

  Args:
    part: the part (its encoder built).
    output_dir: the folder to write (created; files in it are replaced).
    vocab: the WordPiece vocab or SentencePiece model the model was trained with and its
      casing (None: no tokenizer files).
  """
  tf.io.gfile.makedirs(output_dir)
  tensors = part.zero_weights()
  for slot in part.slots():
    tensors[slot.name] = slot.to_hf()
  with tf.io.gfile.GFile(os.path.join(output_dir, "model.safetensors"), "wb") as file:
    file.write(safetensors_bytes(tensors, metadata={"format": "pt"}))
  _write_json(os.path.join(output_dir, "config.json"), hf_config(part))
  if vocab is not None and vocab.kind == tokenization.SENTENCEPIECE:
    with tf.io.gfile.GFile(vocab.vocab_file, "rb") as file:
      model = file.read()
    with tf.io.gfile.GFile(os.path.join(output_dir, hf_sentencepiece.MODEL_FILE), "wb") as file:
      file.write(model)
    for name, text in hf_sentencepiece.tokenizer_files(
        model, part.config.max_sequence_length).items():
      with tf.io.gfile.GFile(os.path.join(output_dir, name), "w") as file:
        file.write(text)
  elif vocab is not None:
    tf.io.gfile.copy(vocab.vocab_file, os.path.join(output_dir, "vocab.txt"), overwrite=True)
    for name, content in tokenizer_files(part, vocab.lower_case,
                                         part.config.max_sequence_length).items():
      _write_json(os.path.join(output_dir, name), content)
  return output_dir


def export_hf(model, output_dir: str, vocab: Optional[RunVocab] = None,
              labels: Sequence[str] = (), problem_type: Optional[str] = None
              ) -> Dict[str, str]:
  """Writes every part of a built model under `output_dir/<part name>/`.

  Args:
    model: the built model.
    output_dir: the folder the parts' folders go in.
    vocab: the vocab and casing to write tokenizer files for (None: none).
    labels: a fine-tuned classifier's label names by id, for config.json's id2label and
      label2id (empty: `LABEL_<id>`).
    problem_type: a classifier's config.json `problem_type` ("multi_label_classification":
      transformers then scores its logits with a sigmoid per label); None: from its outputs
      (one: "regression"; more: transformers' default, one label a text).

  Returns:
    part name -> folder written.

  Raises:
    UserError: a part whose encoder adds a relative position bias, for which transformers'
      ELECTRA and BERT have no weights (nothing is written).
  """
  parts = hf_parts(model, labels, problem_type)
  for part in parts:
    if part.config.relative_position != "none":
      raise UserError(
          f"--mode=export_hf: the {part.name} uses relative_position="
          f"{part.config.relative_position!r} (encoder_config.relative_position), which "
          "transformers' ELECTRA and BERT have no weights for; export a SavedModel with "
          "--mode=export instead")
  skipped = getattr(model, "parts_without_transformers_class", lambda: [])()
  for name, reason in skipped:
    logging.warning("--mode=export_hf: the %s is not written: %s", name, reason)
  return {part.name: export_part(part, os.path.join(output_dir, part.name), vocab)
          for part in parts}
