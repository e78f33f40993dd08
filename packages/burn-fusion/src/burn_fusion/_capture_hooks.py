"""The one seam between Fusion's op wrappers and step capture (`_capture.py`).

Ops whose host arguments change from call to call (random draws advance the device's
counter; Adam's update takes the learning rate and the step count) cannot be replayed as
recorded launches with recorded arguments. `delegate` wraps their inner op with
`dynamic(name, fn)`: outside a recording it is one global read per call; inside one, the
recording (`_capture_run.Recording.dynamic`) asks the tape `resident(name)`: if so, the tape
runs the op inside its recording with the changing values read from memory it rewrites per
replay (`resident_call`; Cuda's scalar block), else it remembers the op as one to call again
at replay (`Tape.dynamic`: the split path).
"""

from __future__ import annotations

#: inner op name -> {role: positional index} of the host scalars a replay must bind anew.
#: The random draws cover attention's dropout too: `burn_tensor.module.attention(dropout=p)`
#: draws its seed words with `int_random` and the attention kernels read them from device
#: memory, so a replay draws new words and its recorded kernels read them (nothing to bind).
#: `dropout` draws its mask inside its one launch (Cuda's `philox_dropout`): a random draw.
DYNAMIC_OPS: dict = {
    "float_random": {},
    "int_random": {},
    "dropout": {},
    "float_adam_update": {"lr": 4, "time": 8},
    "float_adam_update_many": {"lr": 4, "time": 8},
}



def roles(name: str) -> dict:
    """Where op `name`'s host scalars sit (`DYNAMIC_OPS`); {} for an op that is dynamic only
    because its runtime cannot record it (`capture_dynamic`)."""
    return DYNAMIC_OPS.get(name, {})


def capture_dynamic(inner) -> frozenset:
    """The ops called anew at each replay on backend `inner`: `DYNAMIC_OPS`, and those its
    runtime cannot record (`CAPTURE_DYNAMIC`: Cuda's cuBLAS calls, which cupy refuses while a
    stream captures; the graph is split around them)."""
    return frozenset(DYNAMIC_OPS) | frozenset(getattr(inner, "CAPTURE_DYNAMIC", ()))


#: the tape recording on this process now (set by `_capture.py` around a recording call)
ACTIVE = None


def dynamic(name: str, fn):
    """`fn` (an inner backend op), routed through the active recording tape if there is one."""

    def op(*args, **kwargs):
        tape = ACTIVE
        if tape is None:
            return fn(*args, **kwargs)
        return tape.dynamic(name, fn, args, kwargs)

    op.__name__ = name
    return op
