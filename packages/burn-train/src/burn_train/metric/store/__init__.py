"""Metric store: aggregate queries over logged metrics (Burn's `burn::train::metric::store`)."""

from ._store import Aggregate, Direction, EventStore, Split, aggregate

__all__ = ["Aggregate", "Direction", "EventStore", "Split", "aggregate"]
