"""The recipe of a sample-efficiency study: data, encoder, optimizer, budgets and tasks (gin).

A recipe is a gin file binding `Recipe` (and one scoped `DownstreamTask` per fine-tuning
task), e.g. configs/study/kjv_toy.gin (the bundled sample) or configs/study/wordnet.gin
(the study corpus and its WordNet tasks); --recipe_param bindings override it. Parsed in the
orchestrating process only: the runs it starts get plain gin bindings built here.
"""
import dataclasses
import hashlib
import os
from typing import Dict, List, Sequence, Tuple

import gin

import official_runner
from training import gin_config

MASKING = ("static", "dynamic")
BUDGET_SCHEDULES = ("checkpoints", "runs")


@gin.configurable
@dataclasses.dataclass(frozen=True)
class DownstreamTask:
  """One fine-tuning task (bind it in a scope named after the task).

  Attributes:
    name: the task's name in folders, the table and the plot.
    data_flags: `python -m data.create_finetuning_data` flags other than --vocab_file,
      --output_dir and --max_seq_length (e.g. --task=classification, --input_dir=...).
    gin_file: the fine-tuning config (configs/finetune/...).
    metric: the dev metric reported (a key of the run's metrics.jsonl evaluation).
    max_seq_length: tokens per fine-tuning record.
    epochs: fine-tuning epochs (finetuning_steps.epochs; a fraction is a part of one epoch,
      a different random part per seed).
    bindings: further fine-tuning gin bindings.
    dev_examples: score on the first this many dev examples only (0: all; SQuAD keeps
      whole paragraphs); needs --input_dir in data_flags and a file task, not a GLUE preset.
  """
  name: str = gin.REQUIRED
  data_flags: Tuple[str, ...] = gin.REQUIRED
  gin_file: str = gin.REQUIRED
  metric: str = "accuracy"
  max_seq_length: int = 128
  epochs: float = 3.0
  bindings: Tuple[str, ...] = ()
  dev_examples: int = 0


@gin.configurable
@dataclasses.dataclass(frozen=True)
class Recipe:
  """Everything a study run depends on except the objectives.

  Attributes:
    name: title of the table and the plot.
    data_dir: replaces `{data_dir}` in the paths below and in the tasks' data flags; required
      when they name it (a folder of the user's machine, so no recipe file sets it).
    vocab_file: the WordPiece vocab of the records (its size is the encoder's vocab_size).
    train_records, eval_records: pretraining TFRecord globs.
    masking: "static" (the records' masks) or "dynamic" (unmasked records, masked as read).
      Either way each objective masks by its own paper config's rules
      (configs/base/<objective>.gin); the recipe binds none, and static records must have
      been written with the objective's (the run stops otherwise).
    seq_length, max_predictions_per_seq, batch_size: pretraining shapes.
    encoder_bindings: gin bindings of the encoder, shared by pretraining and fine-tuning.
    pretraining_gin_files: gin files applied after the objective's paper config (they must
      not set the task: every objective gets them).
    pretraining_bindings: further pretraining bindings, every objective.
    objective_bindings: objective -> bindings for it alone (e.g. TEAMS' learning rate).
    optimizer, learning_rate, warmup_fraction: pretraining optimizer; warm-up over that
      fraction of the run's steps, then linear decay to 0 at the run's last step.
    eval_steps: held-out pretraining evaluation batches at the end of a run (-1: all).
    budget_flops: the smallest pretraining budget (bench/flops.py `train` FLOPs).
    budget_multiples: budgets are these multiples of budget_flops.
    budget_schedule: "checkpoints": one run per objective to the largest budget, a
      checkpoint at each (one learning-rate schedule, the largest budget's); "runs": one run
      per budget, each with its own warm-up and decay to 0.
    tasks: the DownstreamTasks.
    num_seeds: fine-tuning seeds per checkpoint and task (seeds 0 .. num_seeds - 1).
  """
  name: str = "study"
  data_dir: str = ""
  vocab_file: str = gin.REQUIRED
  train_records: str = gin.REQUIRED
  eval_records: str = gin.REQUIRED
  masking: str = "static"
  seq_length: int = 128
  max_predictions_per_seq: int = 20
  batch_size: int = 32
  encoder_bindings: Tuple[str, ...] = ()
  pretraining_gin_files: Tuple[str, ...] = ()
  pretraining_bindings: Tuple[str, ...] = ()
  objective_bindings: Dict[str, Tuple[str, ...]] = dataclasses.field(default_factory=dict)
  optimizer: str = "adamw"
  learning_rate: float = 2e-3
  warmup_fraction: float = 1 / 6
  eval_steps: int = -1
  budget_flops: float = gin.REQUIRED
  budget_multiples: Tuple[int, ...] = (1, 2, 3)
  budget_schedule: str = "checkpoints"
  tasks: Tuple[DownstreamTask, ...] = gin.REQUIRED
  num_seeds: int = 3

  def __post_init__(self):
    if self.masking not in MASKING:
      raise ValueError(f"Recipe.masking must be one of {MASKING}, got {self.masking!r}")
    if self.budget_schedule not in BUDGET_SCHEDULES:
      raise ValueError(f"Recipe.budget_schedule must be one of {BUDGET_SCHEDULES}, got "
                       f"{self.budget_schedule!r}")
    multiples = list(self.budget_multiples)
    if not multiples or min(multiples) < 1 or sorted(set(multiples)) != multiples:
      raise ValueError(f"Recipe.budget_multiples must be increasing integers >= 1, got "
                       f"{multiples}")
    if self.num_seeds < 1:
      raise ValueError(f"Recipe.num_seeds must be >= 1, got {self.num_seeds}")
    if not self.tasks:
      raise ValueError("Recipe.tasks is empty: name at least one DownstreamTask")
    names = [task.name for task in self.tasks]
    if len(set(names)) != len(names):
      raise ValueError(f"Recipe.tasks names a task twice: {names}")
    if not 0 <= self.warmup_fraction < 1:
      raise ValueError(f"Recipe.warmup_fraction must be in [0, 1), got {self.warmup_fraction}")

  def vocab_size(self) -> int:
    """Lines of the vocab file (a relative path is from the repository root, as the runs')."""
    path = os.path.join(official_runner.REPO_ROOT, self.vocab_file)
    if not os.path.exists(path):
      raise FileNotFoundError(f"Recipe.vocab_file: {path} does not exist")
    with open(path, encoding="utf-8") as f:
      return sum(1 for line in f if line.strip())

  def encoder(self) -> List[str]:
    """The encoder's bindings, vocab size included (pretraining and fine-tuning)."""
    return list(self.encoder_bindings) + [f"encoder_config.vocab_size = {self.vocab_size()}"]


def load(gin_file: str, gin_params: Sequence[str] = ()) -> Recipe:
  """The Recipe of a recipe gin file and bindings (clears the process's gin config).

  Raises:
    training.gin_config.ConfigError: a misspelled name or a missing file (one line).
    ValueError: an inconsistent recipe.
  """
  gin.clear_config()
  gin_config.parse_checked([gin_file] if gin_file else [], list(gin_params),
                           [official_runner.REPO_ROOT])
  recipe = Recipe()
  gin.clear_config()
  return _with_data_dir(recipe)


def _with_data_dir(recipe: Recipe) -> Recipe:
  """`recipe` with {data_dir} in its paths and the tasks' data flags replaced."""
  def fill(text: str) -> str:
    if "{data_dir}" in text and not recipe.data_dir:
      raise ValueError(
          f"Recipe.data_dir is not set and {text!r} needs it: pass the folder that "
          "studies/data/build_study_data.sh wrote, --recipe_param=\"Recipe.data_dir = "
          "'/path/to/study'\"")
    return text.replace("{data_dir}", recipe.data_dir)
  tasks = tuple(dataclasses.replace(task, data_flags=tuple(map(fill, task.data_flags)))
                for task in recipe.tasks)
  return dataclasses.replace(recipe, vocab_file=fill(recipe.vocab_file),
                             train_records=fill(recipe.train_records),
                             eval_records=fill(recipe.eval_records), tasks=tasks)


@dataclasses.dataclass(frozen=True)
class Variant:
  """A registered objective with further pretraining settings: one run of its own.

  Attributes:
    name: the variant's name in folders (pretrain/<name>_<steps>_steps_<hash>/), the table
      and the plot.
    objective: the registered objective (tasks/registry.py) whose paper config it starts from.
    gin_files: gin files applied after that config (before the recipe's).
    bindings: gin bindings applied after the recipe's (they win).
    step_fractions: (binding, fraction) pairs: `binding = int(fraction * steps)` of each
      run, e.g. two-stage ELECTRA's switch at half the run.
  A plain objective is Variant(objective, objective): its runs, folders and FLOPs are the
  objective's own.
  """
  name: str
  objective: str
  gin_files: Tuple[str, ...] = ()
  bindings: Tuple[str, ...] = ()
  step_fractions: Tuple[Tuple[str, float], ...] = ()

  def step_bindings(self, steps: int) -> List[str]:
    """`step_fractions` as bindings of a run of `steps` steps."""
    return [f"{binding} = {int(fraction * steps)}" for binding, fraction in self.step_fractions]

  def run_bindings(self, steps: int) -> List[str]:
    """The variant's bindings for a run of `steps` steps (after the recipe's)."""
    return list(self.bindings) + self.step_bindings(steps)

  def is_plain(self) -> bool:
    return self == Variant(self.objective, self.objective)


def as_variant(objective) -> Variant:
  """`objective` if a Variant, else the plain Variant of a registered objective's name."""
  return objective if isinstance(objective, Variant) else Variant(objective, objective)


def as_dict(recipe: Recipe) -> Dict:
  return dataclasses.asdict(recipe)


def fingerprint(*parts) -> str:
  """8 hex digits naming a run's settings: a changed setting is a new folder, a new run."""
  return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:8]


def pretraining_bindings(recipe: Recipe, objective: str, steps: int,
                         checkpoint_interval: int) -> List[str]:
  """Gin bindings of one pretraining run of `steps` steps, a checkpoint every interval."""
  data = [
      f"PretrainingData.train_file_pattern = '{recipe.train_records}'",
      f"PretrainingData.eval_file_pattern = '{recipe.eval_records}'",
      f"PretrainingData.seq_length = {recipe.seq_length}",
      f"PretrainingData.max_predictions_per_seq = {recipe.max_predictions_per_seq}",
      f"PretrainingData.train_batch_size = {recipe.batch_size}",
      f"PretrainingData.eval_batch_size = {recipe.batch_size}",
  ]
  # The recipe's records decide the mode (each paper config states its paper's: ELECTRA's
  # and SCRIPT's dynamic, TEAMS' static); the rules stay the objective's (configs/base/*.gin).
  data += [f"PretrainingData.masking = '{recipe.masking}'"]
  return recipe.encoder() + data + [
      f"create_optimizer.optimizer = '{recipe.optimizer}'",
      f"create_optimizer.learning_rate = {recipe.learning_rate}",
      f"create_optimizer.warmup_steps = {int(steps * recipe.warmup_fraction)}",
      "RuntimeConfig.distribution_strategy = 'default'",
      "RuntimeConfig.precision = 'float32'",
      f"TrainerConfig.train_steps = {steps}",
      f"TrainerConfig.steps_per_loop = {checkpoint_interval}",
      f"TrainerConfig.summary_interval = {checkpoint_interval}",
      f"TrainerConfig.checkpoint_interval = {checkpoint_interval}",
      f"TrainerConfig.validation_interval = {steps}",
      f"TrainerConfig.validation_steps = {recipe.eval_steps}",
      f"TrainerConfig.max_to_keep = {steps // checkpoint_interval}",
  ] + list(recipe.pretraining_bindings) + list(recipe.objective_bindings.get(objective, ()))


def finetuning_bindings(recipe: Recipe, task: DownstreamTask, init_checkpoint: str,
                        data_dir: str, seed: int) -> List[str]:
  """Gin bindings of one fine-tuning run (on top of task.gin_file)."""
  return recipe.encoder() + [
      f"init_checkpoint = '{init_checkpoint}'",
      f"data_dir = '{data_dir}'",
      f"seed = {seed}",
      f"finetuning_steps.epochs = {task.epochs}",
      "RuntimeConfig.distribution_strategy = 'default'",
  ] + list(task.bindings)
