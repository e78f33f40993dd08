#!/usr/bin/env bash
# burn-fusion on the GPU machine: the one command to run there (see README "On the GPU machine").
# From the repository root, after `source .whl/on-device.sh`:
#   bash tools/burn-fusion/gpu_run.sh            # everything (~6-8 min on an H100)
#   QUICK=1 bash tools/burn-fusion/gpu_run.sh    # benches with --quick
# Runs the conformance suite, the kernel-count tests and burn-autodiff's gradient checks on
# Fusion(Cuda()) and on Fusion(OpenCl("gpu")) (NVIDIA's OpenCL driver), then the benches
# custom_gelu, training_step and autodiff with --backend fusion-cuda beside --backend cuda, each
# beside torch CUDA. Logs and JSON go under $OUT (or ./gpu-out); each step's failure is recorded
# and the script goes on; a summary table comes last.
set -u
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
# The tree's sources first, so the run tests this checkout even if the wheels are older.
src=""
for d in packages/*/src examples/*/src; do src="$src:$PWD/$d"; done
export PYTHONPATH="${src#:}${PYTHONPATH:+:$PYTHONPATH}"
# `--backend fusion-cuda` is an entry point of the burn-fusion wheel: if the carried wheels
# predate burn-fusion, declare its entry points from a throwaway dist-info.
if ! python3 -c "from burn_tensor.backend import backend_spec; backend_spec('fusion-cuda')" \
  >/dev/null 2>&1; then
  ep="$out/.fusion-ep"
  mkdir -p "$ep/burn_fusion_entry_points-0.dist-info"
  printf 'Metadata-Version: 2.1\nName: burn-fusion-entry-points\nVersion: 0\n' \
    >"$ep/burn_fusion_entry_points-0.dist-info/METADATA"
  printf '[burn.backends]\nfusion-opencl = burn_fusion._spec:OPENCL\nfusion-cuda = burn_fusion._spec:CUDA\n' \
    >"$ep/burn_fusion_entry_points-0.dist-info/entry_points.txt"
  export PYTHONPATH="$PYTHONPATH:$PWD/$ep"
fi
PYTEST=(python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib -W error)
T=packages/burn-fusion/tests
summary=()
step() {  # step NAME CMD...: run, log, keep pytest's closing line (or the last line)
  local name=$1; shift
  local t0=$SECONDS
  timeout "${STEP_TIMEOUT:-420}" "$@" >"$out/fusion-$name.log" 2>&1
  local rc=$?
  local last
  last=$(grep -E "[0-9]+ (passed|failed|error)" "$out/fusion-$name.log" | tail -1)
  [ -z "$last" ] && last=$(tail -1 "$out/fusion-$name.log")
  summary+=("$(printf '%-22s | rc=%-3s | %5s s | %s' "$name" "$rc" "$((SECONDS - t0))" "${last:0:100}")")
}
python3 -m burn.backend >"$out/fusion-backends.log" 2>&1
# Fusion(Cuda())
step cuda-conformance env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" $T/test_conformance.py
step cuda-kernels env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" $T/test_kernel_counts.py \
  $T/test_reductions.py $T/test_row_kernels.py $T/test_vector.py $T/test_fusion.py $T/test_render.py \
  $T/test_recipes.py $T/test_row_kernels_multi.py
step cuda-gradcheck env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" $T/test_autodiff_gradcheck.py
# Fusion(OpenCl("gpu")) on NVIDIA's OpenCL driver
step opencl-conformance env BURN_OPENCL_TEST_DEVICE_TYPE=gpu "${PYTEST[@]}" $T/test_conformance.py
step opencl-kernels env BURN_OPENCL_TEST_DEVICE_TYPE=gpu "${PYTEST[@]}" $T/test_kernel_counts.py \
  $T/test_reductions.py $T/test_row_kernels.py $T/test_vector.py $T/test_fusion.py \
  $T/test_recipes.py $T/test_row_kernels_multi.py
# (without checkpointing: the balanced run re-checks the same rules; it ran on Fusion(Cuda()))
step opencl-gradcheck env BURN_OPENCL_TEST_DEVICE_TYPE=gpu "${PYTEST[@]}" \
  $T/test_autodiff_gradcheck.py -k "not balanced"
# Fused GELU bandwidth: scalar vs vector kernel, grid caps, beside torch's copy
step bandwidth python3 tools/burn-fusion/bandwidth.py --backend cuda --log2n 26
# Benches: the same suites on Cuda() and Fusion(Cuda()), each beside torch CUDA
bench_args=()
[ -n "${QUICK:-}" ] && bench_args=(--quick)
for b in fusion-cuda cuda; do
  step "bench-$b" python3 -m benches custom_gelu training_step autodiff --backend "$b" \
    --torch-device cuda --out "$out/benches-$b" "${bench_args[@]}"
done
cat "$out/fusion-backends.log"
grep -h "ops of the table covered" "$out"/fusion-*conformance.log || true
grep -h "target:" "$out"/fusion-bench-fusion-cuda.log || true
python3 - "$out" <<'EOF' || true
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
def load(b, suite):
    p = out / f"benches-{b}" / f"{suite}.json"
    return {r["name"]: r for r in json.loads(p.read_text())["results"]} if p.exists() else {}
def ms(r, impl):
    t = (r or {}).get("times", {}).get(impl)
    return f"{t['median_s'] * 1e3:.3f}" if t else "-"
print(f"{'suite':13s} {'case':28s} {'cuda ms':>10s} {'fusion-cuda ms':>15s} {'torch ms':>10s}")
for suite in ("custom_gelu", "training_step", "autodiff"):
    f, c = load("fusion-cuda", suite), load("cuda", suite)
    for name in f or c:
        torch = ms(f.get(name), "torch") if f.get(name) else ms(c.get(name), "torch")
        print(f"{suite:13s} {name[:28]:28s} {ms(c.get(name), 'burn'):>10s} "
              f"{ms(f.get(name), 'burn'):>15s} {torch:>10s}")
big = load("fusion-cuda", "custom_gelu").get("gelu 2^26")
if big and "unfused" in big["times"]:
    t = big["times"]
    n = big["params"]["n"]
    print(f"custom_gelu 2^26: fused {t['burn']['median_s']*1e3:.3f} ms "
          f"({8 * n / t['burn']['median_s'] / 1e12:.2f} TB/s), unfused "
          f"{t['unfused']['median_s']*1e3:.3f} ms -> {t['unfused']['median_s'] / t['burn']['median_s']:.2f}x")
copy = load("fusion-cuda", "custom_gelu").get("gelu 2^26 vs copy")
if copy and "torch" in copy["times"]:
    n = copy["params"]["n"]
    tc, tb = copy["times"]["torch"]["median_s"], copy["times"]["burn"]["median_s"]
    print(f"torch copy 2^26: {tc*1e3:.3f} ms ({8 * n / tc / 1e12:.2f} TB/s); fused GELU reaches "
          f"{100 * tc / tb:.0f}% of it")
EOF
cat "$out/fusion-bandwidth.log"
printf '%s\n' "${summary[@]}"
