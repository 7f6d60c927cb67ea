"""By hand (issue #36): two workers x 2 micro-batches give one process's whole-batch losses.

  python tests/training/check_multi_worker_accumulation.py

The runner as tests/training/test_multi_worker.py starts it (two local workers, TF_CONFIG),
the tiny ELECTRA of that test, global batch 4: one process with the whole batch, and two
workers each cutting their 2 rows into 2 micro-batches of one. Not collected by pytest (a
multi-worker launch costs a minute of the suite's budget); bench/RESULTS.md has its result.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import numpy as np  # pylint: disable=wrong-import-position

from tests.kit.pretraining import pretraining_examples  # pylint: disable=wrong-import-position
from tests.kit.pretraining import write_pretraining_records  # pylint: disable=wrong-import-position
from tests.kit.runs import tiny_electra_bindings  # pylint: disable=wrong-import-position
from tests.training import test_multi_worker as mw  # pylint: disable=wrong-import-position

workdir = tempfile.mkdtemp(prefix="mw_accum_")
train = write_pretraining_records(f"{workdir}/train.tfrecord", pretraining_examples(24, seed=1))
evaluation = write_pretraining_records(f"{workdir}/eval.tfrecord", pretraining_examples(8, seed=2))
bindings = tiny_electra_bindings(train, evaluation, mw.TRAIN_STEPS, checkpoint_interval=4)
bindings.append("PretrainingData.input_split = 'global_batch'")
configs = {"one": ["RuntimeConfig.distribution_strategy = 'default'"],
           "two": ["RuntimeConfig.distribution_strategy = 'multi_worker_mirrored'",
                   "TrainerConfig.gradient_accumulation_steps = 2"]}
launches = []
for name, extra in configs.items():
  with open(f"{workdir}/{name}.gin", "w") as f:
    f.write("\n".join(bindings + extra) + "\n")
  launches.append(mw._Launch(f"{workdir}/{name}.gin", f"{workdir}/{name}", f"{workdir}/{name}",
                             workers=1 if name == "one" else 2))
try:
  for launch in launches:
    launch.check_finished()
finally:
  for launch in launches:
    launch.kill()
one, two = mw._train_losses(f"{workdir}/one"), mw._train_losses(f"{workdir}/two")
print("steps", sorted(one), sorted(two))
a = np.array([one[s] for s in sorted(one)]); b = np.array([two[s] for s in sorted(two)])
print("one process, whole batch:", a)
print("2 workers x 2 micro-batches:", b)
print("max relative difference:", float(np.max(np.abs(a - b) / np.abs(a))))
