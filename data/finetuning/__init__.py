"""Fine-tuning data: sentence(-pair), SQuAD and tagging readers, their features and the record job.

Imports data/'s shared modules, never data/pretraining/.
"""
