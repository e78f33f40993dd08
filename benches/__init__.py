"""burn-py benchmark suites: `uv run python -m benches [suite ...]` (see README.md)."""
