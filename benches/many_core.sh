#!/usr/bin/env bash
# NdArray on a many-core CPU beside PyTorch CPU with the same thread count: every bench suite,
# one run, then one compact table (printed last).
#
#   source .whl/on-device.sh && bash benches/many_core.sh [THREADS] [REPEATS]
#
# THREADS (default 16) is the budget of both: BURN_NUM_THREADS for NdArray (its pool and numpy's
# BLAS), OPENBLAS_NUM_THREADS for raw numpy and torch.set_num_threads for torch (the harness
# reads it). The tree's package sources come first on PYTHONPATH, so stale wheels do not matter
# (the wheels still bring the third-party dependencies, threadpoolctl included). JSON and the log
# go to $OUT (default benches/results/many_core). About 3-4 minutes on 16 cores.
# NdArray compiles its native kernels with the C compiler found here (printed below, with the
# kernels' status); BURN_NDARRAY_NATIVE=0 runs the numpy paths instead, for a before/after.
set -uo pipefail
threads=${1:-16}
repeats=${2:-5}
out=${OUT:-benches/results/many_core}
mkdir -p "$out/json"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
src=$(printf '%s:' "$root"/packages/*/src "$root"/examples/*/src)
export PYTHONPATH="${src}${PYTHONPATH:-}" PYTHONUNBUFFERED=1
export BURN_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
python3 -c "import threadpoolctl" 2>/dev/null || echo "WARNING: threadpoolctl is not" \
  "importable: NdArray cannot set numpy's BLAS threads (add it to the wheelhouse)" >&2
suites="launch_overhead binary unary reduce softmax max_pool2d conv2d matmul autodiff training_step"
{
  echo "cores: $(nproc) (affinity), budget: $threads threads, repeats: $repeats"
  echo "C compiler: $(command -v "${CC:-cc}" || command -v gcc || echo 'none: NdArray uses its numpy paths')"\
    "| $(getconf GNU_LIBC_VERSION 2>/dev/null) (libmvec's erff/tanhf need 2.35)"
  python3 - <<'EOF'
import time
import numpy
from burn_ndarray import NdArray, _native
t = time.perf_counter()
print("NdArray kernels:", _native.status(), f"({time.perf_counter() - t:.1f} s to build or load)")
print("NdArray memory:", _native.hugepage.state())
b = NdArray()
print("numpy", numpy.__version__, "| NdArray threads", b.num_threads, "parallel_min", b.parallel_min)
try:
    import threadpoolctl
    for i in threadpoolctl.threadpool_info():
        print(" ", i["internal_api"], i.get("version"), i["num_threads"], "threads", i["filepath"])
except ImportError:
    pass
EOF
} 2>&1 | tee "$out/env.log"
start=$(date +%s)
# BENCH_ARGS: extra options of `python -m benches` (e.g. --quick for a smoke test).
timeout 390 python3 -m benches $suites --out "$out/json" --repeats "$repeats" ${BENCH_ARGS:-} 2>&1 | tee "$out/benches.log"
status=${PIPESTATUS[0]}
echo "benches: exit $status after $(($(date +%s) - start)) s" | tee -a "$out/benches.log"
echo
python3 -m benches.summary "$out/json" "${suites// /,}" | tee "$out/table.txt"
echo
# Per-op dispatch at several sizes: NdArray (native kernels), the Python pool, numpy, torch.
# MICRO=0 skips it (the suites above are the measurement; this is the per-op breakdown).
if [ "${MICRO:-1}" != 0 ]; then
  timeout 120 python3 benches/probes/threads_micro.py "$threads" 2>&1 | tee "$out/threads_micro.txt"
fi
exit "$status"
