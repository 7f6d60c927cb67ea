"""Imported first by the programs (official_runner.py, data.create_pretraining_data,
data.create_finetuning_data, data.build_vocab), before TensorFlow loads: TensorFlow's C++
log level 2 (errors only; no CUDA driver, oneDNN or CPU-feature notices) unless the user set
TF_CPP_MIN_LOG_LEVEL (0 shows everything again). Python-side warnings and errors are not
affected.
"""
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
