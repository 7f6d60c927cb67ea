"""matplotlib for the benchmarks' PNGs (or a clear error saying how to install it)."""


def pyplot():
  """matplotlib.pyplot with the file-only Agg backend.

  Raises:
    SystemExit: matplotlib is not installed (it is pinned in requirements-bench.txt).
  """
  try:
    import matplotlib  # pylint: disable=g-import-not-at-top
  except ImportError:
    raise SystemExit("This benchmark writes a PNG and needs matplotlib: "
                     ".venv/bin/pip install -r requirements-bench.txt") from None
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  return plt


def save(figure, axes, path: str):
  """Adds the legend, fits the layout and writes the figure to `path` (PNG)."""
  axes.legend()
  figure.tight_layout()
  figure.savefig(path, dpi=120)
  print(f"wrote {path}")
