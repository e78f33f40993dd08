"""Backend conformance suite (pytest plugin `--burn-backend NAME`)."""
