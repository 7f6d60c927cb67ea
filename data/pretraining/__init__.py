"""Pretraining data: the offline record job (text -> packed, masked TFRecords) and its loader.

Imports data/'s shared modules, never data/finetuning/.
"""
