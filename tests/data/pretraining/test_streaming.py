"""The local runner streams (memory bounded by a shard) and every phase reports progress."""
import gc
import weakref

from data import progress
from data import text_reading
from data.pretraining import local_runner
from data.pretraining import pretraining_pipeline
from tests.kit import paths
from tests.kit import record_job


def test_no_packed_example_is_held_in_memory_when_shards_are_written(tmp_path, monkeypatch):
  alive = []
  pack_chunk, write_shard = pretraining_pipeline.pack_chunk, pretraining_pipeline.write_shard

  def recording_pack_chunk(*args):
    bundles, counts = pack_chunk(*args)
    alive.extend(weakref.ref(bundle) for bundle in bundles.values())
    return bundles, counts

  def checking_write_shard(shard_index, bundles, settings):
    if shard_index == 0:  # the first shard written: packing is over
      gc.collect()
      assert alive and not [ref for ref in alive if ref() is not None]
    return write_shard(shard_index, bundles, settings)

  monkeypatch.setattr(text_reading, "CHUNK_BYTES", 4096)  # the tiny corpus in 8 chunks
  monkeypatch.setattr(pretraining_pipeline, "pack_chunk", recording_pack_chunk)
  monkeypatch.setattr(pretraining_pipeline, "write_shard", checking_write_shard)
  metadata = record_job.make_records(tmp_path / "out", dupe_factor=2, num_workers=1)
  assert metadata["counts"]["examples"] == 2 * metadata["counts"]["packed_examples"] > 0
  assert len(alive) > 8  # several chunks x shards went through the spill files


def test_spilled_bundles_read_back_in_the_order_written(tmp_path):
  settings = pretraining_pipeline.PretrainingDataSettings(
      vocab_file=paths.SAMPLE_VOCAB, output_dir=str(tmp_path), num_shards=2)
  bundle = lambda key: pretraining_pipeline.ShardBundle(key, None, None)
  local_runner.append_bundles(str(tmp_path), {0: bundle((0, 0)), 1: bundle((0, 1))})
  local_runner.append_bundles(str(tmp_path), {1: bundle((1, 0))})
  read = lambda shard: [b.chunk_key for b in local_runner.read_bundles(
      local_runner.spill_file(str(tmp_path), shard))]
  assert (read(0), read(1), read(2)) == ([(0, 0)], [(0, 1), (1, 0)], [])
  del settings


def test_progress_lines_have_counts_rate_and_eta_at_most_every_interval():
  now, lines = [100.0], []
  bar = progress.Progress("packing", 4, "chunks", interval=10, clock=lambda: now[0],
                          log=lines.append)
  for step in (4.0, 4.0, 4.0, 28.0):  # t = 4, 8, 12 (10 s since the start: a line), 40
    now[0] += step
    bar.update()
  assert lines == ["packing: 3/4 chunks (75%) in 0m12s, 0.25 chunks/s, ETA 0m04s",
                   "packing: 4/4 chunks (100%) in 0m40s, 0.1 chunks/s, ETA 0m00s"]
  assert progress.format_duration(3723) == "1h02m03s"


def test_megabyte_progress_counts_whole_megabytes_and_finishes_at_the_total(monkeypatch):
  lines = []
  monkeypatch.setattr(progress.logging, "info", lambda fmt, *args: lines.append(fmt % args))
  reading = progress.MegabyteProgress("reading", 2_500_000, interval=1e9)  # 3 MB in all
  reading.advance(999_999)
  reading.advance(1_500_001)  # 2.5 MB: 2 whole MB, no line yet (interval)
  assert lines == [] and reading.total_mb == 3
  reading.finish()  # the last partial MB: 3/3, a line
  assert len(lines) == 1 and lines[0].startswith("reading: 3/3 MB (100%)")


def test_the_job_logs_packing_and_writing_progress(tmp_path, monkeypatch):
  lines = []
  monkeypatch.setattr(progress.logging, "info", lambda fmt, *args: lines.append(fmt % args))
  record_job.make_records(tmp_path / "out", dupe_factor=1, num_shards=2, num_workers=1)
  lines = [line for line in lines if line.startswith(("packing:", "writing:"))]
  assert [line.split(":")[0] for line in lines] == ["packing", "writing"]
  assert lines[1].startswith("writing: 2/2 shards (100%) in ") and "ETA 0m00s" in lines[1]
