"""Keras layers and models for ELECTRA-family pretraining. No I/O lives here."""
