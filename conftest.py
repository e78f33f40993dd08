"""The workspace's top-level conftest: takes the conformance suite's pytest plugin.

The plugin (fixtures `burn_backend`, `burn`, `burn_checks_on`, the `--burn-backend` option and
the op-coverage summary) is opt-in: burn-backend-tests registers no `pytest11` entry point, so
installing it or burn-tensor changes no one else's pytest session. pytest takes `pytest_plugins`
only from the conftest at the rootdir (a nested conftest declaring it is an error whenever the
run starts above it, as `uv run pytest` does), so the backend packages' suites get it here.
"""

import os

pytest_plugins = ["burn_backend_tests.plugin"]

# Fusion's fused kernels and burn_gpu's templates build without LLVM optimization in the test
# session unless the caller says otherwise (`BURN_OPENCL_BUILD_OPTIONS=` empty: optimized, as
# users build them). On PoCL a cold program then compiles about 10x faster (Fusion's suites
# compile thousands, and CI starts with empty caches); what a kernel computes does not change.
# Optimized builds stay covered: OpenCl's classic eager programs (elementwise, the matmul tiles
# and their autotune, where a compiler crash was once found) never take the option, burn-gpu's
# kernel tests build every eager, attention and half template themselves, and the ONNX suite's
# children run as users do.
os.environ.setdefault("BURN_OPENCL_BUILD_OPTIONS", "-cl-opt-disable")


def pytest_collection_modifyitems(config, items):
    """Leave `install`-marked tests out unless `-m` names them (`.ci/run` runs them as a step).

    They build wheels and download dependencies into bare venvs (a minute or more each), which
    the default `uv run pytest` must not pay for.
    """
    if "install" in (config.getoption("markexpr") or ""):
        return
    kept = [item for item in items if item.get_closest_marker("install") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept
