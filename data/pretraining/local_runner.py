"""Runs the pretraining-data transforms with worker processes on one machine, streaming:
packed examples go to a spill file per shard, so memory is bounded by a shard, not the
corpus."""
import contextlib
import os
import pickle
import shutil
import tempfile
from typing import Dict, Iterator, List, Sequence, Tuple

from data import progress
from data import text_reading
from data import worker_pool
from data.pretraining import pretraining_metadata
from data.pretraining import pretraining_pipeline
from data.pretraining import shard_files


# Work (input bytes x masked copies) that makes a worker process worth its start-up cost (a
# spawned worker imports TensorFlow, a few seconds; one process handles ~15 MB/s of it).
_WORK_BYTES_PER_WORKER = 200 * 2**20


def auto_num_workers(chunks: Sequence[text_reading.TextChunk],
                     settings: pretraining_pipeline.PretrainingDataSettings) -> int:
  """Worker processes for a job: 1 for small inputs, up to the CPU count for big ones."""
  copies = settings.dupe_factor if settings.static_masking else 1
  work = sum(chunk.end - chunk.start for chunk in chunks) * copies
  return max(1, min(os.cpu_count() or 1, len(chunks), -(-work // _WORK_BYTES_PER_WORKER)))


def _pack_chunk_task(args):
  return pretraining_pipeline.pack_chunk(*args)


def _write_spilled_shard_task(args):
  shard_index, spill_file, settings = args
  return pretraining_pipeline.write_shard(shard_index, list(read_bundles(spill_file)),
                                          settings)


def spill_file(spill_dir: str, shard_index: int) -> str:
  return os.path.join(spill_dir, f"shard-{shard_index:05d}.bundles")


def append_bundles(spill_dir: str, bundles: Dict[int, pretraining_pipeline.ShardBundle]):
  """Appends each bundle to its shard's spill file (pickles, one after another)."""
  for shard_index, bundle in bundles.items():
    with open(spill_file(spill_dir, shard_index), "ab") as stream:
      pickle.dump(bundle, stream, protocol=pickle.HIGHEST_PROTOCOL)


def read_bundles(path: str) -> Iterator[pretraining_pipeline.ShardBundle]:
  """The bundles `append_bundles` wrote to one spill file (none if it does not exist)."""
  if not os.path.exists(path):
    return
  with open(path, "rb") as stream:
    while True:
      try:
        yield pickle.load(stream)
      except EOFError:
        return


@contextlib.contextmanager
def spill_folder(output_dir: str) -> Iterator[str]:
  """The job's spill folder, removed at the end (also after an error): under a local
  output_dir (shard_files.SPILL_DIR, which the next job's `prepare_output_dir` removes if
  this one is killed), else a temporary folder under $TMPDIR."""
  if "://" in output_dir:
    with tempfile.TemporaryDirectory(prefix="pretraining-spill-") as path:
      yield path
    return
  path = shard_files.spill_dir(output_dir)
  os.makedirs(path, exist_ok=True)
  try:
    yield path
  finally:
    shutil.rmtree(path, ignore_errors=True)


def run_local(chunks: Sequence[text_reading.TextChunk],
              settings: pretraining_pipeline.PretrainingDataSettings,
              num_workers: int = 1, progress_interval: float = 10.0
              ) -> Tuple[dict, List[dict]]:
  """Packs every chunk, spilling its packed examples to a local file per shard, then writes
  every shard from its file.

  Memory holds one chunk per worker while packing and one shard per worker while writing,
  never the whole packed corpus; the spill files (about 6 bytes per corpus word piece, in
  `spill_folder`) are removed at the end, also after an error. Progress
  lines (with an ETA) are logged every `progress_interval` seconds in both phases.

  Args:
    chunks: the planned input chunks.
    settings: the job settings.
    num_workers: worker processes (spawned, so each loads TensorFlow once); 1 runs in this
      process; 0 picks `auto_num_workers`.
    progress_interval: seconds between progress lines.

  Returns:
    (merged counts, per-shard results sorted by file name).
  """
  if num_workers == 0:
    num_workers = auto_num_workers(chunks, settings)
  num_workers = min(num_workers, len(chunks))
  all_counts = []

  def pack_all(map_unordered, spill_dir):
    packing = progress.Progress("packing", len(chunks), "chunks", progress_interval)
    for bundles, counts in map_unordered(_pack_chunk_task,
                                         [(chunk, settings) for chunk in chunks]):
      all_counts.append(counts)
      append_bundles(spill_dir, bundles)
      packing.update()

  def run_with(map_unordered, spill_dir):
    pack_all(map_unordered, spill_dir)  # (a function, so no chunk's bundles stay referenced)
    writing = progress.Progress("writing", settings.num_shards, "shards", progress_interval)
    shards = []
    for shard in map_unordered(_write_spilled_shard_task,
                               [(shard_index, spill_file(spill_dir, shard_index), settings)
                                for shard_index in range(settings.num_shards)]):
      shards.append(shard)
      writing.update()
    return shards

  with contextlib.ExitStack() as stack:
    map_unordered = map
    if num_workers > 1:
      # The workers start before the spill folder exists: a Ctrl-C in the milliseconds of a
      # worker's launch is dropped (data/worker_pool.py), one after the folder appears is not.
      pool = stack.enter_context(worker_pool.spawned(num_workers))
      map_unordered = lambda task, items: pool.imap_unordered(task, items, chunksize=1)
    shards = run_with(map_unordered, stack.enter_context(spill_folder(settings.output_dir)))
  return (pretraining_metadata.merge_counts(all_counts),
          sorted(shards, key=lambda shard: shard["file"]))
