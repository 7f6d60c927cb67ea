r"""By hand: our HuggingFace exports loaded by transformers' *PyTorch* classes.

`make test` checks the exports with transformers' TF classes (no torch). This checks them
with the PyTorch classes users load, `<Architecture>.from_pretrained(dir)`, in two steps:

  # 1. in .venv: a tiny model of every objective, weights scrambled, exported with the
  #    outputs ours gives (ours.npz beside each folder)
  .venv/bin/python -m bench.hf_pytorch_check --step=export --output_dir=/tmp/hf_check
  # 2. in a venv with torch and transformers (this repo's pins; torch's CPU build):
  python3.11 -m venv /tmp/venv-torch && /tmp/venv-torch/bin/pip install torch \
      transformers==4.57.6 safetensors==0.8.0
  OMP_NUM_THREADS=1 /tmp/venv-torch/bin/python bench/hf_pytorch_check.py --step=load \
      --output_dir=/tmp/hf_check

Step 2 prints, per part, the loading report (missing / unexpected / mismatched weights) and
the largest differences from our sequence output and head logits.
"""
import argparse
import glob
import json
import os

import numpy as np


def export(output_dir: str) -> None:
  # pylint: disable=g-import-not-at-top
  from tests.kit.hf_reference import MODELS
  from tests.kit.hf_reference import our_outputs
  from tests.kit.hf_reference import scramble_weights
  from tests.kit.inputs import tiny_inputs
  from training.hf.hf_export import export_hf
  from training.hf.hf_parts import hf_parts
  from training.run_vocab import RunVocab
  inputs = tiny_inputs(seq=8, vocab=50)
  os.makedirs(output_dir, exist_ok=True)
  np.savez(os.path.join(output_dir, "inputs.npz"), **{k: v.numpy() for k, v in inputs.items()})
  for objective, make_model in MODELS.items():
    model = make_model()
    parts = hf_parts(model)
    for part in parts:
      our_outputs(part, inputs)
    scramble_weights(model.weights, seed=1)
    written = export_hf(model, os.path.join(output_dir, objective),
                        RunVocab("data/sample/vocab.txt", lower_case=True))
    for part in parts:
      sequence, logits = our_outputs(part, inputs)
      np.savez(os.path.join(written[part.name], "ours.npz"), sequence=sequence.numpy(),
               logits=logits.numpy())
  print(f"exported to {output_dir}")


def load(output_dir: str) -> None:
  import torch  # pylint: disable=g-import-not-at-top
  import transformers  # pylint: disable=g-import-not-at-top
  arrays = np.load(os.path.join(output_dir, "inputs.npz"))
  inputs = dict(input_ids=torch.tensor(arrays["input_word_ids"]).long(),
                attention_mask=torch.tensor(arrays["input_mask"]).long(),
                token_type_ids=torch.tensor(arrays["input_type_ids"]).long())
  for config in sorted(glob.glob(os.path.join(output_dir, "*", "*", "config.json"))):
    directory = os.path.dirname(config)
    with open(config) as file:
      architecture = json.load(file)["architectures"][0]
    model, info = getattr(transformers, architecture).from_pretrained(
        directory, output_loading_info=True)
    model.eval()
    with torch.no_grad():
      output = model(**inputs, output_hidden_states=True)
    ours = np.load(os.path.join(directory, "ours.npz"))
    sequence = np.abs(output.hidden_states[-1].numpy() - ours["sequence"]).max()
    logits = np.abs(output.logits.numpy() - ours["logits"]).max()
    problems = {name: keys for name, keys in info.items() if keys}
    print(f"{os.path.relpath(directory, output_dir):26s} {architecture:22s} "
          f"loading: {problems or 'complete'}  max|sequence diff| {sequence:.1e}  "
          f"max|logits diff| {logits:.1e}")


if __name__ == "__main__":
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--step", choices=["export", "load"], required=True)
  parser.add_argument("--output_dir", default="/tmp/hf_check")
  args = parser.parse_args()
  (export if args.step == "export" else load)(args.output_dir)
