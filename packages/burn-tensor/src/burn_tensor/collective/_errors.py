"""Errors of the collective layer."""

from __future__ import annotations


class CollectiveError(RuntimeError):
    """A collective could not complete: a rank failed or left, shapes or dtypes disagree, the
    rendezvous timed out. The message names the group, the op and the ranks concerned."""
