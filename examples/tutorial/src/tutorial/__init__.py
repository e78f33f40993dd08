"""The Burn foundations tutorial's exercises 1-11, solved with burn-py.

Each `tutorial.exercise_NN` module has a `run()` that prints what the exercise asks and returns
the values a test can check. `tutorial N` (console script) runs exercise N, `tutorial all` all.
"""

EXERCISES: tuple[int, ...] = tuple(range(1, 12))

__all__ = ["EXERCISES"]
