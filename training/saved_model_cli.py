"""TensorFlow's `saved_model_cli`, with the tensorflow-text ops registered.

The text signatures of this library's exports use tensorflow-text ops (FastBertTokenizer),
which the stock `saved_model_cli` does not load, so it fails with "Op type not registered
'FastBertNormalize'". Same arguments:

  python -m training.saved_model_cli show --dir DIR/export/encoder/300 --all
  python -m training.saved_model_cli run --dir DIR/export/encoder/300 --tag_set serve \
      --signature_def encode_text --input_exprs 'text=["In the beginning"]'
"""
import sys

import tensorflow_text  # pylint: disable=unused-import  (registers the ops)
from tensorflow.python.tools import saved_model_cli

if __name__ == "__main__":
  sys.exit(saved_model_cli.main())
