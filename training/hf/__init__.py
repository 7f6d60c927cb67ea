"""HuggingFace interop: our checkpoints to and from a transformers folder (safetensors).

Used at training time (initialising from a transformers folder) and by --mode=export_hf.
"""
