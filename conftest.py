"""The workspace's top-level conftest: takes the conformance suite's pytest plugin, caps
pytest-xdist's worker count and prints the session summaries its workers send back.

The plugin (fixtures `burn_backend`, `burn`, `burn_checks_on`, the `--burn-backend` option and
the op-coverage summary) is opt-in: burn-backend-tests registers no `pytest11` entry point, so
installing it or burn-tensor changes no one else's pytest session. pytest takes `pytest_plugins`
only from the conftest at the rootdir (a nested conftest declaring it is an error whenever the
run starts above it, as `uv run pytest` does), so the backend packages' suites get it here.
"""

import os

import pytest

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


#: memory one pytest-xdist worker may need at its peak (the ONNX suite, Fusion's compiled
#: programs, the training tests' datasets): a worker more than memory allows would swap or be killed
WORKER_MEMORY = 3 << 30
#: beyond this many workers the suite gets no faster (a few long files bound it) and a large
#: machine would only pay for more interpreters and compiles
MAX_WORKERS = 8


def worker_count(cpus: int, memory: int) -> int:
    """pytest-xdist workers for `-n auto` (the workspace default): min(cpus, memory / 3 GiB, 8),
    at least 1. `memory` in bytes.

    Example: `worker_count(64, 512 << 30) == 8`, `worker_count(16, 8 << 30) == 2`.
    """
    return max(1, min(cpus, memory // WORKER_MEMORY, MAX_WORKERS))


def _cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _memory_bytes() -> int:
    """Physical memory, or the cgroup's limit when a container sets a lower one."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows): memory does not cap
        return MAX_WORKERS * WORKER_MEMORY
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: `worker_count` of the CPUs this process may use and the memory; pytest-xdist's
    own PYTEST_XDIST_AUTO_NUM_WORKERS still wins when set (then its hook answers)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return worker_count(_cpus(), _memory_bytes())


#: section title -> lines that pytest-xdist workers sent back (`workeroutput["summary_sections"]`)
_SECTIONS: dict[str, list[str]] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the xdist controller: keep the summary sections a finished worker sent.

    A package's conftest that prints a session summary from what its tests gathered (the ONNX
    suite's, packages/burn-import/tests/conftest.py) runs its tests in a worker, whose terminal
    nobody sees; it puts its lines in `config.workeroutput["summary_sections"][title]` and they
    are printed here instead.
    """
    sent = getattr(node, "workeroutput", {}).get("summary_sections", {})
    for title, lines in sent.items():
        _SECTIONS.setdefault(title, []).extend(lines)


def pytest_terminal_summary(terminalreporter):
    for title, lines in _SECTIONS.items():
        terminalreporter.section(title)
        for line in lines:
            terminalreporter.write_line(line)
