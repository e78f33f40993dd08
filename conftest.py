"""The workspace's top-level conftest: takes the conformance suite's pytest plugin.

The plugin (fixtures `burn_backend`, `burn`, `burn_checks_on`, the `--burn-backend` option and
the op-coverage summary) is opt-in: burn-backend-tests registers no `pytest11` entry point, so
installing it or burn-tensor changes no one else's pytest session. pytest takes `pytest_plugins`
only from the conftest at the rootdir (a nested conftest declaring it is an error whenever the
run starts above it, as `uv run pytest` does), so the backend packages' suites get it here.
"""

pytest_plugins = ["burn_backend_tests.plugin"]
