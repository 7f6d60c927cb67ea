"""Tag schemes of a token-tagging task: which tags a scheme allows, and the span types.

  iob1   CoNLL-2003's original files: I-X inside a span, B-X only where a span of type X
         directly follows another of type X.
  iob2   BIO, HuggingFace datasets' conll2003: every span starts with B-X.
  iobes  B-X, I-X, E-X (end), S-X (single-word span).
  plain  any tag, one per word, no spans (parts of speech): scored by token accuracy.

A span scheme's tags are "O" or "<prefix>-<type>". An I- tag that does not follow a B- or I-
of its type is read as conlleval reads it, the start of a new span (so are a lone E- and an
I- after E-/S-); it is not refused. Plain data, no I/O.
"""
from typing import Optional, Sequence, Tuple

TAG_SCHEMES = ("iob1", "iob2", "iobes", "plain")
OUTSIDE = "O"
_PREFIXES = {"iob1": ("B", "I"), "iob2": ("B", "I"), "iobes": ("B", "I", "E", "S")}


def tag_problem(tag: str, scheme: str) -> Optional[str]:
  """Why `tag` is not a tag of `scheme`, or None when it is."""
  if not tag.strip():
    return f"empty tag {tag!r}"
  if scheme == "plain" or tag == OUTSIDE:
    return None
  prefix, dash, kind = tag.partition("-")
  if not dash or prefix not in _PREFIXES[scheme] or not kind:
    allowed = ", ".join(f"{p}-TYPE" for p in _PREFIXES[scheme])
    return f"tag {tag!r} is not O or {allowed} (--tag_scheme={scheme})"
  return None


def span_types(labels: Sequence[str], scheme: str) -> Tuple[str, ...]:
  """The span types the labels name, sorted (none for the plain scheme)."""
  if scheme == "plain":
    return ()
  return tuple(sorted({label.partition("-")[2] for label in labels if label != OUTSIDE}))


def order_labels(tags: Sequence[str]) -> Tuple[str, ...]:
  """Inferred label order: "O" first when present, then the rest sorted."""
  unique = set(tags)
  return ((OUTSIDE,) if OUTSIDE in unique else ()) + tuple(sorted(unique - {OUTSIDE}))
