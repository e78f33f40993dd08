"""Which ops of the backend contract the conformance suite actually ran, per backend.

While a suite test runs, every op of `Backend.op_table()` on the backend under test is replaced by a
counting wrapper (an instance attribute shadowing the method, then the Tensor layer's per-kind views are
rebuilt so they dispatch through the wrappers). Between suite tests the backend is restored, so other
tests of the same process never pay for or see the instrumentation.

An op counts as covered when a suite test reached it on the backend under test: through a Tensor method,
a `burn_tensor.module`/`activation` function, a direct call of a backward primitive, or a default
decomposition of another op (a default calls `self.<op>`, which goes through the wrapper too).

Example:
    >>> cov = OpCoverage(backend)
    >>> with cov.recording():
    ...     Tensor.ones([2], backend.device()).exp()
    >>> cov.called["float_exp"]
    1
"""

from __future__ import annotations

import contextlib
import functools
from collections import Counter

from burn_tensor.backend import rebuild_kind_views

#: ops that exist in the table but are attributes no suite case can meaningfully "call" -- none today;
#: an op listed here must say why in the comment beside it.
NOT_CALLABLE: frozenset[str] = frozenset()


class OpCoverage:
    """Counts calls of each op-table entry on one backend instance while recording."""

    def __init__(self, backend):
        self.backend = backend
        self.table: list[str] = list(backend.op_table())
        self.called: Counter[str] = Counter()
        #: set by the completeness case: the whole suite ran on this backend in this session
        self.complete_run = False

    def missing(self) -> list[str]:
        """Ops of the table no suite test reached."""
        return [n for n in self.table if n not in self.called and n not in NOT_CALLABLE]

    def summary(self, whole_suite: bool = True) -> str:
        """One line: how many ops of the table the suite reached; the missing ones after a full run."""
        miss = self.missing()
        covered = len(self.table) - len(miss)
        line = f"{self.backend!r}: {covered} of {len(self.table)} ops of the table covered"
        if not (whole_suite and self.complete_run):
            line += " (a subset of the suite ran)"
        elif miss:
            line += " (missing: " + ", ".join(miss) + ")"
        return line

    @contextlib.contextmanager
    def recording(self):
        """Install the counting wrappers for the duration of the block, then restore the backend."""
        b = self.backend
        own = vars(b)
        # Decorators (Autodiff) keep per-instance op functions in the instance dict: wrap those and
        # put them back afterwards, rather than deleting what the backend installed itself.
        saved = {}
        for name in self.table:
            fn = own[name] if name in own else getattr(b, name, None)
            if fn is None or not callable(fn):
                continue
            saved[name] = own.get(name, _ABSENT)
            object.__setattr__(b, name, _counting(fn, name, self.called))
        rebuild_kind_views(b)
        try:
            yield self
        finally:
            for name, previous in saved.items():
                if previous is _ABSENT:
                    object.__delattr__(b, name)
                else:
                    object.__setattr__(b, name, previous)
            rebuild_kind_views(b)


_ABSENT = object()


def _counting(fn, name: str, counter: Counter):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        counter[name] += 1
        return fn(*args, **kwargs)

    wrapper.__burn_counting__ = True
    return wrapper
