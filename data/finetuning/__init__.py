"""Fine-tuning data: sentence(-pair) and SQuAD readers, their features and the record job.

Imports data/'s shared modules, never data/pretraining/.
"""
