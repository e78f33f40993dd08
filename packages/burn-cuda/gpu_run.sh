#!/usr/bin/env bash
# burn-cuda on the GPU machine: the one command to run there (see README "On the GPU machine").
# From the repository root, after `source .whl/on-device.sh`:
#   bash packages/burn-cuda/gpu_run.sh            # everything, benches in full
#   QUICK=1 bash packages/burn-cuda/gpu_run.sh    # benches with --quick, guide on 512 items
# Runs on Cuda(): the conformance suite (f32/i32 and f64/i64), the GPU-only tests, burn-autodiff's
# gradient checks, the nn tests, `guide train --backend cuda`, and the benches against torch CUDA.
# Logs and JSON go under $OUT (or ./gpu-out); each step's failure is recorded and the script goes
# on; a summary table comes last.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# The tree's sources first, so the run tests this checkout even if the wheels are older.
src=""
for d in packages/*/src examples/*/src; do src="$src:$PWD/$d"; done
export PYTHONPATH="${src#:}${PYTHONPATH:+:$PYTHONPATH}"
PYTEST=(python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib -W error)
summary=()
step() {  # step NAME CMD...: run, log, keep pytest's closing line (or the last line)
  local name=$1; shift
  local t0=$SECONDS
  timeout "${STEP_TIMEOUT:-1800}" "$@" >"$out/cuda-$name.log" 2>&1
  local rc=$?
  local last
  last=$(grep -E "[0-9]+ (passed|failed|error)" "$out/cuda-$name.log" | tail -1)
  [ -z "$last" ] && last=$(tail -1 "$out/cuda-$name.log")
  summary+=("$(printf '%-12s | rc=%-3s | %5s s | %s' "$name" "$rc" "$((SECONDS - t0))" "${last:0:110}")")
}
python3 -m burn.backend >"$out/cuda-backends.log" 2>&1
step conformance "${PYTEST[@]}" packages/burn-cuda/tests/test_conformance.py
step gpu-tests "${PYTEST[@]}" packages/burn-cuda/tests/test_gpu.py packages/burn-cuda/tests/test_cpu.py
step gradcheck "${PYTEST[@]}" packages/burn-cuda/tests/test_autodiff_gradcheck.py
step nn env BURN_NN_TEST_BACKEND=cuda "${PYTEST[@]}" packages/burn-nn/tests
if [ -n "${QUICK:-}" ]; then guide_args=(--epochs 1 --limit 512); bench_args=(--quick); else
  guide_args=(--epochs 2); bench_args=(); fi
step guide python3 -m guide.cli train --backend cuda --artifact-dir "$out/guide" "${guide_args[@]}"
step benches python3 -m benches --backend cuda --torch-device cuda --out "$out/benches" \
  "${bench_args[@]}" ${BENCH_ARGS:-}
cat "$out/cuda-backends.log"
grep -h "ops of the table covered" "$out"/cuda-conformance.log || true
grep -h "target:" "$out"/cuda-benches.log || true
printf '%s\n' "${summary[@]}"
