"""Paths the tests read: the repository root, data/sample and the fine-tuning test data."""
import os

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE_DIR = os.path.join(REPO_ROOT, "data", "sample")
SAMPLE_VOCAB = os.path.join(SAMPLE_DIR, "vocab.txt")
TINY_CORPUS = os.path.join(SAMPLE_DIR, "kjv_tiny.txt")
FINETUNING_TESTDATA = os.path.join(REPO_ROOT, "tests", "data", "finetuning_testdata")
FINETUNING_VOCAB = os.path.join(FINETUNING_TESTDATA, "vocab.txt")
