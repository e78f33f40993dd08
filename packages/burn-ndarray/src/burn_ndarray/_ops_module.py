"""Module ops (conv, pools, interpolate) on numpy -- filled in by the module-ops work."""

from __future__ import annotations


class NdArrayModuleOps:
    pass
