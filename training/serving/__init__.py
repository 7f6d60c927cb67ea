"""Export and serving: SavedModels with id, tf.Example and raw-text signatures, Hub pairs.

Imports training/'s core (run_vocab, checkpoints), never the loop or the optimizer.
"""
