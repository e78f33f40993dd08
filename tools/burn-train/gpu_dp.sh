#!/usr/bin/env bash
# The data-parallel checks that need NVIDIA GPUs (NCCL through cupy), in one command:
#
#   source .whl/on-device.sh && bash tools/burn-train/gpu_dp.sh
#
# 1. the in-process path (2 NdArray devices) and 1 device, as the reference parameters;
# 2. NCCL with world size 1 (one process) and with one process per GPU (or 2 processes sharing
#    GPU 0 where there is one GPU: NCCL may refuse that; the log says what happened), each
#    training the same 3 epochs and compared with the reference;
# 3. all-reduce bandwidth of the collective layer beside NCCL's own call (256 MiB), on all GPUs;
# 4. throughput and validation accuracy for 1 and N GPUs of the compute-bound transformer encoder
#    (benches/collective/dp_throughput.py --model transformer, global batch 256) on each backend of
#    DP_BACKENDS (default "cuda fusion-cuda": Autodiff(Cuda()) and Autodiff(Fusion(Cuda()))), for
#    each option set of DP_CONFIGS (default d_model 512 and 1024); DP_ARGS adds options to every
#    run, DP_TIMEOUT limits each run (s), DP_SKIP=1 skips this part, DP_ONLY=1 runs only it.
# Logs and JSON go to $OUT (default /tmp/gpu_dp); a table is printed last.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/gpu_dp}
mkdir -p "$out"
cd "$root"
src=$(printf '%s:' "$root"/packages/*/src "$root"/examples/*/src)
export PYTHONPATH="$root:${src}${PYTHONPATH:-}" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
child=packages/burn-train/tests/dp_child.py
gpus=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 0)
echo "GPUs: $gpus"
n=$(( gpus > 1 ? gpus : 2 ))
bw="skipped (needs 2 GPUs)"
if [ -z "${DP_ONLY:-}" ]; then
python3 "$child" "$out/ref1" 1 3 > "$out/ref1.log" 2>&1; echo "ref 1 device: exit $?"
python3 "$child" "$out/ref2" 2 3 > "$out/ref2.log" 2>&1; echo "ref 2 devices in-process: exit $?"
BURN_COLLECTIVE=nccl python3 -m burn_train.launch --nproc-per-node 1 "$child" "$out/nccl1" 1 3 \
  > "$out/nccl1.log" 2>&1; echo "nccl world 1: exit $?"
BURN_COLLECTIVE=nccl timeout 300 python3 -m burn_train.launch --nproc-per-node "$n" "$child" \
  "$out/nccl$n" 1 3 > "$out/nccl$n.log" 2>&1; echo "nccl $n processes on $gpus GPU(s): exit $?"
grep -h -i "nccl\|error\|duplicate" "$out/nccl$n.log" | tail -5
if [ "$gpus" -ge 2 ]; then
  timeout 300 python3 -m burn_train.launch --nproc-per-node "$gpus" benches/collective/allreduce.py \
    --mib 256 > "$out/allreduce.log" 2>&1
  bw=$(grep '^{' "$out/allreduce.log" | tail -1)
fi
fi  # DP_ONLY
# Throughput for 1 and N GPUs on each backend of DP_BACKENDS (Autodiff(<backend>) per rank).
# Each config of DP_CONFIGS (';'-separated option sets) on each backend: d_model 512 (host
# overhead per op still shows at 128 items per GPU) and d_model 1024 (compute-bound).
rows=()
configs=${DP_CONFIGS:-"--d-model 512 --items 16384 --epochs 4;--d-model 1024 --items 8192 --epochs 4"}
if [ -z "${DP_SKIP:-}" ]; then
  IFS=';' read -ra cfgs <<< "$configs"
  for c in "${cfgs[@]}"; do
    tag=d$(sed -n 's/.*--d-model \([0-9]*\).*/\1/p' <<< "$c"); tag=${tag:-d512}
    for b in ${DP_BACKENDS:-cuda fusion-cuda}; do
      # shellcheck disable=SC2206 - the option sets split on spaces
      dp=(benches/collective/dp_throughput.py --backend "$b" --model transformer --batch-size 256
          $c ${DP_ARGS:-})
      for w in 1 $(( gpus >= 2 ? gpus : 0 )); do
        [ "$w" -eq 0 ] && { rows+=("$tag $b|2|skipped (needs 2 GPUs)"); continue; }
        log="$out/dp-$tag-$b-$w.log"
        BURN_COLLECTIVE=nccl timeout "${DP_TIMEOUT:-420}" python3 -m burn_train.launch \
          --nproc-per-node "$w" "${dp[@]}" > "$log" 2>&1
        rc=$?
        line=$(grep '^{' "$log" | tail -1)
        rows+=("$tag $b|$w|${line:-exit $rc (see $(basename "$log"))}")
        echo "transformer $tag on $b, $w GPU(s): ${line:-exit $rc}"
      done
    done
  done
fi
printf '%s\n' "${rows[@]}" > "$out/dp_rows.txt"
python3 - "$out" "$n" "$bw" <<'PY'
import json, sys, numpy as np
from pathlib import Path
out, n, bw = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ref = out / "ref1" / "params.npz"
rows = []
for name in ("ref2", "nccl1", f"nccl{n}"):
    p = out / name / "params.npz"
    if not (ref.exists() and p.exists()):
        rows.append((name, "no parameters (see its log)"))
        continue
    a, b = np.load(ref), np.load(p)
    rows.append((name, f"max |diff| vs 1 device = {max(float(np.abs(a[k] - b[k]).max()) for k in a):.3g}"))
print("\n| run | result |\n|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} |")
print(f"| all-reduce 256 MiB | {bw} |")
runs = {}
for line in (out / "dp_rows.txt").read_text().splitlines():
    if not line:
        continue
    backend, world, result = line.split("|", 2)
    print(f"| transformer {backend}, {world} GPU(s) | {result} |")
    try:
        runs.setdefault(backend, {})[world] = json.loads(result)
    except ValueError:
        pass
for backend, by_world in runs.items():
    one = by_world.get("1")
    for world, r in by_world.items():
        if world == "1" or one is None:
            continue
        print(f"| scaling {backend}, {world} vs 1 GPU | "
              f"{r['items_per_s'] / one['items_per_s']:.2f}x items/s; accuracy "
              f"{one['valid_accuracy']} vs {r['valid_accuracy']} "
              f"(diff {abs(one['valid_accuracy'] - r['valid_accuracy']):.2f} points) |")
PY
