"""A tiny sample-efficiency recipe (records, two fine-tuning tasks) and its runs' attempt logs."""
import os

from studies.common import study_recipe
from studies.common import study_runs
from tests.kit.paths import SAMPLE_VOCAB
from tests.kit.record_job import make_records


def write_tsv(path, header, rows):
  path.parent.mkdir(parents=True, exist_ok=True)
  path.write_text("\n".join("\t".join(row) for row in [header] + rows) + "\n")


def _tiny_tasks(root):
  """A 3-class single-sentence task and a sentence-pair task, 12 train and 6 dev rows each."""
  topics = {"lord": "the lord god of israel", "sea": "the waters of the sea",
            "bread": "and they did eat bread"}
  for split, count in (("train", 12), ("dev", 6)):
    names = list(topics)
    write_tsv(root / "single" / f"{split}.tsv", ["sentence", "label"],
              [[f"{topics[names[i % 3]]} {i}", names[i % 3]] for i in range(count)])
    write_tsv(root / "pair" / f"{split}.tsv", ["sentence1", "sentence2", "label"],
              [[topics[names[i % 3]], topics[names[(i + i % 2) % 3]], "yes" if i % 2 == 0
                else "no"] for i in range(count)])


def tiny_recipe(tmp_path):
  """A Recipe on tiny records and tasks written under `tmp_path`: the tiny encoder cut to
  one layer, batch 4, budget_flops 1 (one step a budget unit), budgets 1x and 2x, 2 seeds."""
  make_records(tmp_path / "records" / "train", dupe_factor=2, num_shards=1)
  make_records(tmp_path / "records" / "eval", dupe_factor=1, num_shards=1, seed=8)
  _tiny_tasks(tmp_path / "tasks")
  finetuning = ["train_batch_size = 4", "FinetuningData.eval_batch_size = 6",
                "GlueTask.write_test_predictions = False", "TrainerConfig.steps_per_loop = 1"]
  tasks = {"single": "sentence", "pair": "sentence1,sentence2"}
  recipe = study_recipe.Recipe(
      name="tiny", vocab_file=SAMPLE_VOCAB,
      train_records=str(tmp_path / "records" / "train" / "pretrain-*.tfrecord"),
      eval_records=str(tmp_path / "records" / "eval" / "pretrain-*.tfrecord"),
      seq_length=64, max_predictions_per_seq=10, batch_size=4,
      encoder_bindings=("encoder_config.size = 'tiny'",
                        "encoder_config.overrides = {'num_layers': 1}"),
      eval_steps=1, budget_flops=1.0, budget_multiples=(1, 2), num_seeds=2,
      tasks=tuple(study_recipe.DownstreamTask(
          name=name, data_flags=("--task=classification",
                                 f"--input_dir={tmp_path / 'tasks' / name}",
                                 f"--text_columns={columns}"),
          gin_file="configs/finetune/classification.gin", max_seq_length=16, epochs=1,
          bindings=tuple(finetuning)) for name, columns in tasks.items()))
  return recipe


def attempt_logs(work_dir):
  """{run folder: its attempts.jsonl} under `work_dir`: equal before and after, nothing ran."""
  logs = {}
  for root, _, files in os.walk(work_dir):
    if study_runs.ATTEMPTS_FILE in files:
      with open(os.path.join(root, study_runs.ATTEMPTS_FILE)) as f:
        logs[root] = f.read()
  return logs
