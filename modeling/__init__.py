"""Keras layers and models for ELECTRA-family pretraining and fine-tuning. No I/O lives here.

  layers/    the encoder and its parts
  heads/     what sits on an encoder's output
  sampling/  replacement tokens and candidate sets
  losses/    the objectives' losses
  models/    each objective's model, the fine-tuning models
  flop_count.py  the analytic FLOPs of all of them
"""
