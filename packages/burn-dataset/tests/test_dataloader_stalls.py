"""A dataset item that blocks: `timeout=` names the late batch, and Ctrl-C ends the process
within 2 s (the loader's threads used to keep it alive until the item returned)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from burn_dataset import DataLoader, DataLoaderBuilder, InMemDataset
from burn_dataset._base import Dataset


class Stuck(Dataset):
    """Item 5 blocks for `hang` seconds."""

    def __init__(self, hang: float):
        self.hang = hang

    def get(self, index):
        if index == 5:
            time.sleep(self.hang)
        return index if index < 10 else None

    def __len__(self):
        return 10


def test_timeout_names_the_late_batch():
    loader = DataLoaderBuilder(lambda items, device: items).batch_size(2).num_workers(2)
    loader = loader.timeout(0.5).build(Stuck(3.0))
    it = iter(loader)
    assert next(it) == [0, 1] and next(it) == [2, 3]
    with pytest.raises(TimeoutError, match=r"batch 2 \(dataset indices \[4, 5\]\).*0.5 s"):
        next(it)
    with pytest.raises(StopIteration):  # the epoch ended with the error
        next(it)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "1"])
def test_timeout_must_be_positive_seconds(bad):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        DataLoader(lambda i, d: i, InMemDataset([1]), 1, num_workers=1, timeout=bad)


def test_timeout_needs_workers():
    with pytest.raises(ValueError, match="timeout needs num_workers > 0"):
        DataLoader(lambda i, d: i, InMemDataset([1]), 1, timeout=1.0)


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child is POSIX")
def test_ctrl_c_with_a_blocked_item_exits_within_two_seconds():
    code = textwrap.dedent(
        """
        import sys, time
        from burn_dataset import DataLoaderBuilder
        from burn_dataset._base import Dataset

        class Stuck(Dataset):
            def get(self, index):
                if index == 3:
                    time.sleep(60)
                return index if index < 8 else None
            def __len__(self):
                return 8

        loader = DataLoaderBuilder(lambda items, device: items).batch_size(2).num_workers(2)
        print("start", flush=True)
        for batch in loader.build(Stuck()):
            print(batch, flush=True)
        """
    )
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout.readline().strip() == "start"
        assert proc.stdout.readline().strip() == "[0, 1]"
        time.sleep(0.5)  # the consumer now waits on batch 1, whose item blocks for a minute
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        try:
            _, err = proc.communicate(timeout=20)
        finally:
            proc.kill()
        elapsed = time.monotonic() - sent
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
    assert elapsed < 2.0, f"exit took {elapsed:.1f} s after Ctrl-C"
