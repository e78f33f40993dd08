#!/usr/bin/env bash
# burn-cuda on the GPU machine: the one command to run there (see README "Tests").
# From the repository root, after `source .whl/on-device.sh`:
#   bash tools/burn-cuda/gpu_run.sh            # everything (about 6-8 minutes on an H100)
#   QUICK=1 bash tools/burn-cuda/gpu_run.sh    # benches with --quick, guide on 512 items
# Steps, most important first: the dispatch profile (where a small op's time goes, the guide
# step's profile, cupy's bfloat16 support), the benches against torch CUDA (GPU-sized cases and
# targets included), the conformance suite on Cuda() f32/i32 and f64/i64, the GPU-only tests
# (bf16 included) and the hot path's CPU tests, burn-autodiff's gradient checks, the
# custom-cuda-kernel example's tests, `guide train` (1 epoch) on Cuda and on NdArray (wall time
# of each), burn-nn's tests on Cuda, the conformance suite on Cuda() in bfloat16 and float16.
# Logs and JSON go under $OUT (or ./gpu-out); a failing step is recorded and the script goes
# on; a step is skipped once the time budget (BUDGET_S, default 560 s) is spent; the summary
# table comes last.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# The tree's sources first, so the run tests this checkout even if the wheels are older.
src=""
for d in packages/*/src examples/*/src; do src="$src:$PWD/$d"; done
export PYTHONPATH="${src#:}${PYTHONPATH:+:$PYTHONPATH}"
PYTEST=(python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib -W error)
budget=${BUDGET_S:-560}
summary=()
step() {  # step NAME TIMEOUT CMD...: run, log, keep pytest's closing line (or the last line)
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS left=$((budget - SECONDS))
  if [ "$left" -le 10 ]; then
    summary+=("$(printf '%-16s | skipped: time budget (%s s) spent' "$name" "$budget")")
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" >"$out/cuda-$name.log" 2>&1
  local rc=$?
  local last
  last=$(grep -E "[0-9]+ (passed|failed|error)" "$out/cuda-$name.log" | tail -1)
  [ -z "$last" ] && last=$(tail -1 "$out/cuda-$name.log")
  [ "$rc" = 124 ] && last="TIMED OUT after $limit s; $last"
  summary+=("$(printf '%-16s | rc=%-3s | %4s s | %s' "$name" "$rc" "$((SECONDS - t0))" "${last:0:120}")")
}
python3 -m burn.backend >"$out/cuda-backends.log" 2>&1
python3 -c "import ml_dtypes, cupy; print('ml_dtypes', ml_dtypes.__version__, 'cupy', cupy.__version__)" \
  >>"$out/cuda-backends.log" 2>&1
if [ -n "${QUICK:-}" ]; then guide_args=(--epochs 1 --limit 512); bench_args=(--quick); else
  guide_args=(--epochs 1); bench_args=(--repeats 5 --min-time 0.03); fi
step profile 120 python3 tools/burn-cuda/profile_dispatch.py
step benches 270 python3 -m benches --backend cuda --torch-device cuda --sizes gpu \
  --out "$out/benches" "${bench_args[@]}" ${BENCH_ARGS:-}
step conformance 200 "${PYTEST[@]}" packages/burn-cuda/tests/test_conformance.py
if grep -qE "^[0-9]+ failed|[0-9]+ failed" "$out/cuda-conformance.log"; then
  # attribute failures: the same suite without the hot path (cupy's ops for everything)
  step conformance-nofast 200 env BURN_CUDA_FAST=0 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py
fi
step gpu-tests 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_gpu.py \
  packages/burn-cuda/tests/test_fast_gpu.py packages/burn-cuda/tests/test_bf16.py \
  packages/burn-cuda/tests/test_direct_ops_gpu.py packages/burn-cuda/tests/test_optim_many_gpu.py \
  packages/burn-cuda/tests/test_gemm_gpu.py packages/burn-cuda/tests/test_launch_gpu.py \
  packages/burn-cuda/tests/test_cpu.py \
  packages/burn-cuda/tests/test_fast_cpu.py
step gradcheck 120 "${PYTEST[@]}" packages/burn-cuda/tests/test_autodiff_gradcheck.py
step example 60 "${PYTEST[@]}" examples/custom-cuda-kernel/tests
step guide-cuda 90 python3 -m guide.cli train --backend cuda --artifact-dir "$out/guide-cuda" \
  "${guide_args[@]}"
step guide-ndarray 120 python3 -m guide.cli train --backend ndarray \
  --artifact-dir "$out/guide-ndarray" "${guide_args[@]}"
step nn 150 env BURN_NN_TEST_BACKEND=cuda "${PYTEST[@]}" packages/burn-nn/tests
step conformance-half 180 env BURN_CUDA_CONFIGS=bf16-i32,f16-i32 "${PYTEST[@]}" \
  packages/burn-cuda/tests/test_conformance.py
echo "== backends"; cat "$out/cuda-backends.log"
echo "== dispatch profile (first lines; full log: $out/cuda-profile.log)"
head -75 "$out/cuda-profile.log"
echo "== conformance coverage"
grep -h "ops of the table covered" "$out"/cuda-conformance*.log || true
echo "== bf16/f16 conformance: failures per config, then the first 30"
for c in bf16-i32 f16-i32; do
  echo "$c: $(grep -cE "^FAILED.*$c" "$out"/cuda-conformance-half.log 2>/dev/null) failed"
done
grep -E "^FAILED" "$out"/cuda-conformance-half.log 2>/dev/null | sed -E 's/ - .*//' | head -30
echo "== bench throughput and targets"
grep -hE "TFLOP/s|GB/s|target:" "$out"/cuda-benches.log | grep -v "PyTorch CPU" || true
echo "== summary (guide-cuda vs guide-ndarray: wall seconds of the same training run)"
printf '%s\n' "${summary[@]}"
