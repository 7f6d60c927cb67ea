"""The fixtures of tests/bench shared by several files, defined here so each is built once.

A session fixture imported into two test files is two fixtures (one per file), each built:
`trained` (a TensorFlow export and 20 jax steps, ~1 min) is read by test_device_pretrain.py
and test_import_device_state.py.
"""
from tests.kit.device_pretraining import trained  # noqa: F401  pylint: disable=unused-import
