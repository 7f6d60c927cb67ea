"""Runs the pretraining-data transforms as an Apache Beam pipeline.

The pipeline applies the same `pack_chunk` and `write_shard` as the local runner, so it writes
the same files for the same seed and shard count. Locally it runs on the DirectRunner; pass
`--runner=DataflowRunner ...` (or Flink / Spark) in `pipeline_args` for big corpora, with the
input, vocab and output on a file system every worker reads (e.g. gs://) and this repository
shipped to the workers (e.g. `--setup_file`, see BUILD.md).

Needs `apache-beam` (in requirements.txt).
"""
from typing import Callable, List, Sequence

from data import text_reading
from data.pretraining import pretraining_metadata
from data.pretraining import pretraining_pipeline

_COUNTS_TAG = "counts"


def run_beam(chunks: Sequence[text_reading.TextChunk],
             settings: pretraining_pipeline.PretrainingDataSettings,
             finish: Callable[[dict, List[dict]], None],
             pipeline_args: Sequence[str] = ()) -> None:
  """Packs every chunk and writes every shard in a Beam pipeline.

  Args:
    chunks: the planned input chunks.
    settings: the job settings.
    finish: called once, on a worker, with (merged counts, per-shard results): writes the
      metadata file.
    pipeline_args: Beam pipeline options, e.g. ["--runner=DataflowRunner", ...].
  """
  try:
    import apache_beam as beam  # pylint: disable=g-import-not-at-top
    from apache_beam.options import pipeline_options  # pylint: disable=g-import-not-at-top
  except ImportError as e:
    raise ImportError("--runner=beam needs apache-beam: pip install -r requirements.txt"
                      ) from e

  class PackChunk(beam.DoFn):
    """chunk -> (shard index, ShardBundle) elements, and the chunk's counts on a side tag."""

    def process(self, chunk):
      bundles, counts = pretraining_pipeline.pack_chunk(chunk, settings)
      yield beam.pvalue.TaggedOutput(_COUNTS_TAG, dict(counts))
      yield from bundles.items()

  options = pipeline_options.PipelineOptions(list(pipeline_args))
  with beam.Pipeline(options=options) as pipeline:
    packed = (pipeline
              | "Chunks" >> beam.Create(list(chunks))
              | "Spread" >> beam.Reshuffle()
              | "Pack" >> beam.ParDo(PackChunk()).with_outputs(_COUNTS_TAG, main="bundles"))
    every_shard = pipeline | "EveryShard" >> beam.Create(
        [(shard_index, None) for shard_index in range(settings.num_shards)])
    shards = ((packed.bundles, every_shard)
              | "WithEmptyShards" >> beam.Flatten()
              | "ByShard" >> beam.GroupByKey()
              | "WriteShard" >> beam.MapTuple(
                  lambda shard_index, bundles: pretraining_pipeline.write_shard(
                      shard_index, [bundle for bundle in bundles if bundle is not None],
                      settings)))
    counts = packed[_COUNTS_TAG] | "MergeCounts" >> beam.CombineGlobally(
        pretraining_metadata.merge_counts)
    shard_list = shards | "ShardList" >> beam.combiners.ToList()
    _ = (pipeline
         | "Once" >> beam.Create([None])
         | "Finish" >> beam.Map(lambda _, merged, shard_results: finish(merged, shard_results),
                                merged=beam.pvalue.AsSingleton(counts),
                                shard_results=beam.pvalue.AsSingleton(shard_list)))
