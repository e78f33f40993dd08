#!/usr/bin/env bash
# burn-opencl on an NVIDIA GPU through NVIDIA's OpenCL driver (the GPU machine; see the root README).
# From the repository root, after `source .whl/on-device.sh` (which registers NVIDIA's OpenCL ICD):
#   bash packages/burn-opencl/gpu_run.sh
# Runs the conformance suite and the autodiff gradient checks on OpenCl("gpu"), writes logs under
# $OUT (or ./gpu-out), and prints a summary last. Each step's failure is recorded; the script goes on.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
export BURN_OPENCL_TEST_DEVICE_TYPE=gpu PYTHONUNBUFFERED=1
summary=()
step() {  # step NAME CMD...: run, tee the log, keep pytest's closing line
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$out/opencl-$name.log" 2>&1
  local rc=$?
  local last
  last=$(grep -E "passed|failed|error" "$out/opencl-$name.log" | tail -1)
  summary+=("opencl $name | rc=$rc | $((SECONDS - t0)) s | ${last:-no pytest line}")
}
python3 -c "import pyopencl as cl; [print(p.name, [d.name for d in p.get_devices()]) for p in cl.get_platforms()]" \
  >"$out/opencl-platforms.log" 2>&1
step conformance python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib \
  packages/burn-opencl/tests/test_conformance.py
step gradcheck python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib \
  packages/burn-opencl/tests/test_autodiff_gradcheck.py
cat "$out/opencl-platforms.log"
grep -h "ops of the table covered" "$out"/opencl-conformance.log || true
printf '%s\n' "${summary[@]}"
