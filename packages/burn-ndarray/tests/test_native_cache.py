"""The native kernels' cache (issue 31, security review F4, F13, F25): a truncated or foreign
library in the cache is deleted and rebuilt, never loaded (a truncated one killed every process
with SIGBUS; a foreign one left NdArray on numpy for good); a cache folder that another user
owns or anyone can write, and a library planted at the old predictable `/tmp/burn-<uid>` path,
are never loaded: the build goes to a fresh private folder of the process instead.

Each case runs in a fresh subprocess, so a crash in the loader fails the test instead of
killing pytest. The truncated library (F13) is `test_native.py::
test_two_processes_build_at_once_and_a_truncated_or_corrupted_file_is_rebuilt`, which pays for the
real rebuild; the cases here use `false` as the compiler, so they fail fast after choosing where
the build goes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from burn_ndarray import _native
from burn_tensor import cache

LIB = _native.lib()
needs_native = pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}")
STATUS = "from burn_ndarray import _native as n; print(n.status())"
OTHER_UID = 40001


def _run(code: str, env: dict, timeout: int = 300):
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", code], env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


def _env(**changes) -> dict:
    env = {**os.environ, **{k: v for k, v in changes.items() if v is not None}}
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
    return env


@needs_native
@pytest.mark.skipif(shutil.which("false") is None, reason="needs `false` as a failing compiler")
def test_a_foreign_library_in_the_cache_is_deleted_and_rebuilt(tmp_path):
    """F25: a library without the kernels' symbols, even one whose size and sha256 match its
    sidecar, is deleted and a build starts (here with `false` as the compiler, so it fails
    fast: the real rebuild is the truncated case's)."""
    import _ctypes  # a real shared library without any of the kernels' symbols

    false = shutil.which("false")
    source = _native.source_digest()
    folder = tmp_path / "ndarray-native"
    folder.mkdir(mode=0o700)
    os.chmod(tmp_path, 0o700)
    libs = [folder / f"kernels-{_native._key(false, source, fl)}.so"
            for fl in {tuple(_native.flags()), tuple(_native.FLAGS)}]  # fmt: skip
    for lib in libs:
        cache.write_verified(lib, Path(_ctypes.__file__).read_bytes())
    out = _run(STATUS, _env(BURN_CACHE_DIR=str(tmp_path), CC=false))
    assert out.returncode == 0, out.stderr[-2000:]
    # the status is the failed build's (`false`), not the foreign library's missing symbol
    assert out.stdout.startswith(f"numpy fallback: {false} "), out.stdout
    assert "undefined symbol" not in out.stdout
    assert not [lib for lib in libs if lib.exists() or cache.sidecar(lib).exists()]


PLANTED_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
  const char *p = getenv("BURN_TEST_CANARY");  /* harmless unless a test asks for a canary */
  if (p) { FILE *f = fopen(p, "a"); if (f) { fputs("loaded\n", f); fclose(f); } }
}
int burn_native_version(void) { return 1; }
"""

CHILD = """
import os, sys
from burn_ndarray import _native
for case, env in [
    ("other-uid", {"BURN_CACHE_DIR": sys.argv[1]}),
    ("world-writable", {"BURN_CACHE_DIR": sys.argv[2]}),
    ("no-home", {"HOME": "/proc/burn-no-such-home"}),
]:
    for k in ("BURN_CACHE_DIR", "XDG_CACHE_HOME"):
        os.environ.pop(k, None)
    os.environ.update(env)
    try:
        _native.build()
        print(case, "BUILT")
    except OSError as e:  # CC is `false`: the build fails, after choosing where it goes
        print(case, str(e).split(" -o ")[1].split()[0])
"""


@needs_native
@pytest.mark.skipif(os.getuid() != 0, reason="chown to another uid needs root")
@pytest.mark.skipif(shutil.which("false") is None, reason="needs `false` as a failing compiler")
def test_untrusted_folders_and_the_old_tmp_fallback_are_never_loaded(tmp_path):
    cc = _native.find_compiler()
    false = shutil.which("false")
    source = _native.source_digest()
    names = {f"kernels-{_native._key(false, source, fl)}.so" for fl in (_native.flags(), _native.FLAGS)}
    planted = tmp_path / "planted.so"
    (tmp_path / "planted.c").write_text(PLANTED_C)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(planted), str(tmp_path / "planted.c")],
                   check=True, capture_output=True, timeout=120)  # fmt: skip

    def plant(folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(planted, folder / name)
            cache.write_atomic(cache.sidecar(folder / name),  # a sidecar that matches, too
                               f"burn-cache-v1 {name} {planted.stat().st_size} "
                               f"{hashlib.sha256(planted.read_bytes()).hexdigest()}\n".encode())  # fmt: skip

    other, open_ = tmp_path / "other", tmp_path / "open"
    plant(other / "ndarray-native")
    for p in (other, other / "ndarray-native"):
        os.chown(p, OTHER_UID, OTHER_UID)
        os.chmod(p, 0o755)
    plant(open_ / "ndarray-native")
    for p in (open_, open_ / "ndarray-native"):
        os.chmod(p, 0o777)
    # the predictable fallback older versions used when the home could not be written
    old = Path(tempfile.gettempdir()) / f"burn-{os.getuid()}" / "ndarray-native"
    existed = old.exists()
    plant(old)
    canary = tmp_path / "canary"
    try:
        out = subprocess.run(
            [sys.executable, "-W", "default", "-c", CHILD, str(other), str(open_)],
            env=_env(CC=false, BURN_TEST_CANARY=str(canary)), capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
    finally:
        for name in names:
            cache.discard(old / name)
        if not existed:
            shutil.rmtree(old.parent, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert not canary.exists(), "a planted library was loaded:\n" + out.stdout + out.stderr
    where = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert set(where) == {"other-uid", "world-writable", "no-home"}, out.stdout + out.stderr
    for case, path in where.items():  # each build went to a fresh private mkdtemp folder
        folder = Path(path).parent
        assert folder.name.startswith("burn-ndarray-native-"), (case, path)
        assert folder.parent == Path(tempfile.gettempdir()), (case, path)
    assert f"owned by uid {OTHER_UID}" in out.stderr and "CacheWarning" in out.stderr
    assert "writable by group or others (mode 0777)" in out.stderr
