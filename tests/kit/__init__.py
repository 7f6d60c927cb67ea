"""The shared test kit: tiny models, data, trainers and runs that more than one test uses.

One module a job; tests import the names they use (`from tests.kit.pretraining import SEQ`).
  paths          the repository, data/sample and the fine-tuning test data
  encoders       tiny_encoder: the "tiny" preset over a given vocabulary
  inputs         tiny encoder and pretrainer inputs, Gumbel noise
  gradients      shared variables, which weight groups a loss trains
  pretraining    tiny masked examples, their TFRecord file, tiny BERT / ELECTRA tasks
  objectives     tasks on data/sample records, a few training steps with Adam
  trainers       pretraining and fine-tuning trainers, a loss-falls run
  runs           gin bindings of a tiny run, its logged losses
  record_job     the data tests' pretraining-data job and reading its records back
  finetuning     the fine-tuning test tokenizer, TSV files
  export_models  tiny SCRIPT / GLUE / SQuAD tasks and built models for export
  hf_reference   transformers as the reference of the HuggingFace-format tests
  bench          a benchmark module run as users run it
"""
