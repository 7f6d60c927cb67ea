"""The user-error types: a mistake in the user's flags, gin config, files or checkpoints.

The programs (official_runner.py, python -m data....) print such an error as `error: ...`
without a traceback and exit with status 1; any other exception is a bug and keeps its
traceback. The checks raise them (they live here, at the bottom of the import graph, so
data/, tasks/ and training/ can all raise them). They subclass ValueError (and
FileNotFoundError), so callers catching those still catch them.
"""

# gin appends "\n  In call to configurable 'X' (<class ...>)" to exceptions raised inside a
# configurable; the user's message is what came before.
_GIN_CONTEXT = "\n  In call to configurable "


class UserError(ValueError):
  """A mistake in the flags, the gin config or the inputs; the message says which."""


class MissingFileError(UserError, FileNotFoundError):
  """A file, record pattern or checkpoint the user named does not exist."""


def user_error_message(error: BaseException) -> str:
  """The error's message as the user wrote the config (gin's call context cut off)."""
  return str(error).split(_GIN_CONTEXT, 1)[0]
