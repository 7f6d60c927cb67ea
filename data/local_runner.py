"""Runs the pretraining-data transforms with worker processes on one machine."""
import collections
import multiprocessing
import os
from typing import List, Sequence, Tuple

from data import pretraining_metadata
from data import pretraining_pipeline
from data import text_reading


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


def _write_shard_task(args):
  return pretraining_pipeline.write_shard(*args)


def run_local(chunks: Sequence[text_reading.TextChunk],
              settings: pretraining_pipeline.PretrainingDataSettings,
              num_workers: int = 1) -> Tuple[dict, List[dict]]:
  """Packs every chunk, then writes every shard.

  Args:
    chunks: the planned input chunks.
    settings: the job settings.
    num_workers: worker processes (spawned, so each loads TensorFlow once); 1 runs in this
      process; 0 picks `auto_num_workers`.

  Returns:
    (merged counts, per-shard results sorted by file name).
  """
  if num_workers == 0:
    num_workers = auto_num_workers(chunks, settings)
  num_workers = min(num_workers, len(chunks))
  bundles_by_shard = collections.defaultdict(list)
  all_counts = []

  def run_with(map_unordered):
    for bundles, counts in map_unordered(_pack_chunk_task,
                                         [(chunk, settings) for chunk in chunks]):
      all_counts.append(counts)
      for shard_index, bundle in bundles.items():
        bundles_by_shard[shard_index].append(bundle)
    shard_tasks = [(shard_index, bundles_by_shard.pop(shard_index, []), settings)
                   for shard_index in range(settings.num_shards)]
    return list(map_unordered(_write_shard_task, shard_tasks))

  if num_workers <= 1:
    shards = run_with(map)
  else:
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=num_workers) as pool:
      shards = run_with(lambda task, items: pool.imap_unordered(task, items, chunksize=1))
  return (pretraining_metadata.merge_counts(all_counts),
          sorted(shards, key=lambda shard: shard["file"]))
