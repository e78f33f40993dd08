#!/usr/bin/env bash
# burn-opencl on the GPU machine: NVIDIA's OpenCL driver on the H100, and PoCL on its 16 cores.
# From the repository root, after `source .whl/on-device.sh` (which registers NVIDIA's OpenCL ICD):
#   bash tools/burn-opencl/gpu_run.sh          # everything, ~8-9 minutes
#   QUICK=1 bash tools/burn-opencl/gpu_run.sh  # smoke test: tiny sizes, guide on 512 items
#   (DEVICE_TYPE=cpu: the same on PoCL, to try the script on a machine without a GPU)
# Logs and JSON go under $OUT (or ./gpu-out); a summary table comes last. Every step has a
# timeout inside one overall budget (BUDGET seconds, default 560) and the script goes on after a
# failure.
#
# 1. correctness on OpenCl("gpu"), five pytest processes at once (16 cores): the conformance suite
#    f32/i32 and f64/i64, burn-autodiff's gradient checks, the backend/autotune tests (every
#    matmul tile on odd, transposed, batched operands) and examples/custom-opencl-kernel's tests;
# 2. overhead.py: our Python per op with the enqueue stubbed (this host's CPU);
#    bench_large.py: add on 2^26 vs torch's copy bandwidth, matmul 2048^2/4096^2 TFLOP/s (the
#    autotune pick and every tile) vs torch with TF32 off, conv2d b32 64->64 56x56;
# 3. benches launch_overhead binary matmul conv2d training_step, --backend opencl vs torch CUDA;
# 4. `guide train --backend opencl`: accuracy and wall time;
# 5. PoCL on the 16 cores: conv2d and training_step on OpenCl (PoCL) and on NdArray (16 threads),
#    both beside torch CPU.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 BURN_CACHE_DIR="$out/cache"
src=""
for d in packages/*/src examples/*/src; do src="$src:$PWD/$d"; done
export PYTHONPATH="${src#:}${PYTHONPATH:+:$PYTHONPATH}"
deadline=$((SECONDS + ${BUDGET:-560}))
PYTEST=(python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib -W error)
if [ -n "${QUICK:-}" ]; then
  quick=(--quick); guide_args=(--epochs 1 --limit 512); reps=(--quick)
else
  quick=(); guide_args=(); reps=(--repeats 5)
fi
summary=()
limit() {  # seconds a step may take: its own cap, within what is left of the budget
  local left=$((deadline - SECONDS - ${2:-0}))
  [ "$left" -lt "$1" ] && echo $((left > 5 ? left : 5)) || echo "$1"
}
note() {  # note NAME RC T0: one summary row from the step's log
  local log="$out/opencl-$1.log" last
  last=$(grep -E "[0-9]+ (passed|failed|error)" "$log" 2>/dev/null | tail -1)
  [ -z "$last" ] && last=$(grep -v "^[[:space:]]*$" "$log" 2>/dev/null | tail -1)
  summary+=("$(printf '%-14s | rc=%-3s | %4s s | %s' "$1" "$2" "$((SECONDS - $3))" "${last:0:100}")")
}
step() {  # step NAME CAP RESERVE CMD...: run with a timeout, log, note
  local name=$1 cap=$2 reserve=$3; shift 3
  local t0=$SECONDS
  timeout "$(limit "$cap" "$reserve")" "$@" >"$out/opencl-$name.log" 2>&1
  note "$name" $? "$t0"
}

# BURN_OPENCL_DEVICE for PoCL: its platform's index as pyopencl orders the platforms
pocl=$(python3 -c 'import pyopencl as cl
print(next((f"{i}:0" for i, p in enumerate(cl.get_platforms()) if "Portable" in p.name), ""))')
python3 -m burn.backend >"$out/opencl-backends.log" 2>&1

# -- 1. correctness, in parallel -----------------------------------------------------------------
t0=$SECONDS
cap=$(limit 180 330)
export BURN_OPENCL_TEST_DEVICE_TYPE=${DEVICE_TYPE:-gpu}
pids=()
for job in "conf-f32:packages/burn-opencl/tests/test_conformance.py -k f32-i32" \
  "conf-f64:packages/burn-opencl/tests/test_conformance.py -k f64-i64" \
  "gradcheck:packages/burn-opencl/tests/test_autodiff_gradcheck.py" \
  "backend:packages/burn-opencl/tests/test_backend.py packages/burn-opencl/tests/test_autotune.py packages/burn-opencl/tests/test_plan.py" \
  "example:examples/custom-opencl-kernel/tests"; do
  name=${job%%:*}
  # shellcheck disable=SC2086
  timeout "$cap" "${PYTEST[@]}" ${job#*:} >"$out/opencl-$name.log" 2>&1 &
  pids+=("$!:$name")
done
for p in "${pids[@]}"; do wait "${p%%:*}"; note "${p#*:}" $? "$t0"; done
unset BURN_OPENCL_TEST_DEVICE_TYPE

# -- 2.-4. timed on the GPU, one at a time -------------------------------------------------------
step overhead 25 300 python3 tools/burn-opencl/overhead.py --device-type "${DEVICE_TYPE:-gpu}" \
  --number 5000
step large 80 250 python3 tools/burn-opencl/bench_large.py --json "$out/large.json" \
  --device-type "${DEVICE_TYPE:-gpu}" \
  "${quick[@]}"
step benches 130 150 python3 -m benches launch_overhead binary matmul conv2d training_step \
  --backend opencl --torch-device cuda --out "$out/benches" "${reps[@]}"
t0=$SECONDS
step guide 75 90 python3 -m guide.cli train --backend opencl --artifact-dir "$out/guide" \
  "${guide_args[@]}"

# -- 5. PoCL on the CPU cores beside NdArray and torch CPU ---------------------------------------
if [ -n "$pocl" ]; then
  # PoCL compiles and autotunes its kernels on first use: ~155 s on the 16-core host.
  step pocl 200 30 env BURN_OPENCL_DEVICE="$pocl" python3 -m benches conv2d training_step \
    --backend opencl --sizes cpu --out "$out/pocl" --repeats 3 "${quick[@]}"
else
  summary+=("pocl           | no PoCL platform: skipped")
fi
step ndarray 50 0 env BURN_NUM_THREADS="$(nproc)" OPENBLAS_NUM_THREADS="$(nproc)" \
  python3 -m benches conv2d training_step --backend ndarray --sizes cpu --out "$out/ndarray" --repeats 3 \
  "${quick[@]}"

# -- summary -------------------------------------------------------------------------------------
cat "$out/opencl-backends.log"
grep -h "ops of the table covered" "$out"/opencl-conf-*.log || true
cat "$out/opencl-overhead.log"
echo "== large cases (OpenCl on the GPU vs torch CUDA) =="
sed -n '/^device:/,$p' "$out/opencl-large.log"
echo "== benches, OpenCl GPU vs torch CUDA =="
python3 -m benches.summary "$out/benches" 2>/dev/null || true
grep -h "target" "$out/opencl-benches.log" || true
echo "== PoCL ($pocl, $(nproc) cores) vs torch CPU =="
python3 -m benches.summary "$out/pocl" 2>/dev/null || true
echo "== NdArray ($(nproc) threads) vs torch CPU =="
python3 -m benches.summary "$out/ndarray" 2>/dev/null || true
echo "== guide train --backend opencl =="
grep -E "^\| (Valid|Train) \| Accuracy" "$out/opencl-guide.log" || tail -3 "$out/opencl-guide.log"
grep -E "autotune picked" "$out/opencl-large.log" || true
printf '%s\n' "${summary[@]}"
