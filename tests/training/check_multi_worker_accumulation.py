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

from tests.training import test_multi_worker as mw  # pylint: disable=wrong-import-position

workdir = tempfile.mkdtemp(prefix="mw_accum_")
mw.run_one_process_and_two_workers(
    workdir, mw.global_batch_bindings(workdir, checkpoint_interval=4),
    two_workers_extra=["TrainerConfig.gradient_accumulation_steps = 2"])
one, two = mw._train_losses(f"{workdir}/one"), mw._train_losses(f"{workdir}/two")
print("steps", sorted(one), sorted(two))
a = np.array([one[s] for s in sorted(one)]); b = np.array([two[s] for s in sorted(two)])
print("one process, whole batch:", a)
print("2 workers x 2 micro-batches:", b)
print("max relative difference:", float(np.max(np.abs(a - b) / np.abs(a))))
