"""Child process of the kill -9 tests: saves one record over and over into a folder.

Usage: save_child.py FOLDER MODE
  MODE "loop": save `model` forever (until killed), printing the count after each save.
  MODE "hold": start one save, write FOLDER/holding while inside it, then wait for FOLDER/release
               before finishing it (a live writer whose temporary file must survive others' sweeps).
"""

import sys
import time
from pathlib import Path

import burn_record as br
import numpy as np

folder, mode = Path(sys.argv[1]), sys.argv[2]
rec = br.NamedMpkFileRecorder()
# ~4 MB per save: big enough that a kill often lands inside a write
item = {"w": br.TensorData(np.arange(1 << 20, dtype=np.float32)), "step": 0}

if mode == "loop":
    step = 0
    while True:
        step += 1
        item["step"] = step
        rec.record(item, folder / "model")
        print(step, flush=True)
else:

    class Held:
        """A value whose encoding blocks: the temporary file exists meanwhile."""

    def slow_chunks(_item):
        yield b"\x80"  # an empty map: a valid (if short) body, never loaded by the test
        (folder / "holding").write_text("inside a write\n")
        end = time.monotonic() + 120
        while not (folder / "release").exists() and time.monotonic() < end:
            time.sleep(0.01)

    from burn_record._atomic import atomic_write

    def write(f):
        for chunk in slow_chunks(item):
            f.write(chunk)

    atomic_write(folder / "held.bin", write)
    print("done", flush=True)
