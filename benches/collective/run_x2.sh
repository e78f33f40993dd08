#!/usr/bin/env bash
# Where the 2-GPU data-parallel run loses its time (issue 40's >= 1.95x at d_model 1024), on
# nvidia-h200-x2, from the repository root after installing the carried wheels:
#
#   source .whl/on-device.sh && bash benches/collective/run_x2.sh [PART]
#
# The transformer of dp_throughput.py (d_model 1024, global batch 256, 16384 items x 2 epochs;
# epoch 2 is timed) on 1 GPU and on 2 GPUs (NCCL), with gradient buckets of 25 MB and 0 (reduced
# after the backward pass), with and without --shard-optimizer. Every rank prints its per-step
# breakdown (data, forward, backward, collective, loss_check, optimizer, metrics, stop_check,
# other). PART (default "main"):
#   main     1 GPU; 2 GPUs x bucket {25, 0} x shard {no, yes}                 (~5 min)
#   profile  the same 1-GPU and 2-GPU (25 MB, no shard) runs with --profile: the device is
#            synchronised at every phase mark, so each phase holds its GPU time (slower)
#   extra    1 and 2 GPUs (25 MB) with --read-every 1: the loss read and checked before every
#            update, so the host waits for the GPU every step (what every data-parallel run did
#            before: the A/B of the deferred check); and with --num-workers 1 (the next batch
#            built by a thread) (~5 min)
#   check    1 GPU; 2 GPUs (25 MB) twice and with --shard-optimizer: the parameters of the two
#            plain runs must be bitwise equal, the sharded run's within 1e-6 (~4 min)
#   channels 1 GPU; 2 GPUs (25 MB) with NCCL's default channels, NCCL_MAX_NCHANNELS=4 (twice)
#            and 8: NCCL's kernels run on SMs the overlapped backward pass then lacks (~4 min)
#   all      main, profile, extra (may pass the 10-minute limit of one device command)
# Logs and the JSON lines go to $OUT (default /tmp/run_x2); a table is printed last, with the
# scaling of each 2-GPU run against the 1-GPU run of the same part. RUN_ARGS adds options to
# every run (e.g. "--items 8192", later options win); RUN_TIMEOUT limits each run (s, default
# 300). CPU dry run: RUN_BACKEND=ndarray RUN_COLLECTIVE=tcp RUN_GPUS=2 RUN_ARGS="--d-model 16
# --layers 1 --seq 16 --items 256 --batch-size 32 --valid-items 64" bash ...run_x2.sh main
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/run_x2}
part=${1:-main}
mkdir -p "$out"
cd "$root"
src=$(printf '%s:' "$root"/packages/*/src)
export PYTHONPATH="$root:${src}${PYTHONPATH:-}" PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0
# RUN_BACKEND / RUN_COLLECTIVE / RUN_GPUS: a CPU dry run of the script (ndarray, tcp, 2)
export BURN_COLLECTIVE=${RUN_COLLECTIVE:-nccl}
unset BURN_DDP_BUCKET_MB BURN_DDP_SHARD_OPTIM
gpus=${RUN_GPUS:-$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" \
  2>/dev/null || echo 0)}
echo "GPUs: $gpus; part: $part; out: $out"
base=(benches/collective/dp_throughput.py --backend "${RUN_BACKEND:-cuda}" --model transformer
      --d-model 1024
      --batch-size 256 --epochs 2 --items 16384)
rows="$out/rows-$part.txt"
: > "$rows"

run() {  # run NAME WORLD [options...]: one launch, its log, a row "NAME|WORLD|JSON|BREAKDOWNS"
  local name=$1 world=$2
  shift 2
  if [ "$world" -gt "$gpus" ]; then
    echo "$name|$world|skipped: needs $world GPUs, found $gpus|" >> "$rows"
    return
  fi
  local log="$out/$name.log"
  # shellcheck disable=SC2086 - RUN_ARGS splits on spaces
  timeout "${RUN_TIMEOUT:-300}" python3 -m burn_train.launch --nproc-per-node "$world" \
    "${base[@]}" "$@" ${RUN_ARGS:-} > "$log" 2>&1
  local rc=$? line
  line=$(grep '^{' "$log" | tail -1)
  local parts
  parts=$(grep '^rank [0-9]* breakdown ' "$log" | sed 's/^rank \([0-9]*\) breakdown /\1=/' \
    | paste -sd'\t')
  echo "$name|$world|${line:-exit $rc (see $(basename "$log"))}|$parts" >> "$rows"
  echo "$name ($world GPU): ${line:-exit $rc}"
  grep '^rank [0-9]* breakdown ' "$log"
}

main() {
  run 1gpu 1
  run 2gpu-b25 2 --bucket-mb 25 --save-params "$out/2gpu-b25.npz"
  run 2gpu-b25-shard 2 --bucket-mb 25 --shard-optimizer --save-params "$out/2gpu-b25-shard.npz"
  run 2gpu-b0 2 --bucket-mb 0 --save-params "$out/2gpu-b0.npz"
  run 2gpu-b0-shard 2 --bucket-mb 0 --shard-optimizer --save-params "$out/2gpu-b0-shard.npz"
  for b in b25 b0; do  # sharded optimizer state against plain data parallel, same steps
    if [ -f "$out/2gpu-$b.npz" ] && [ -f "$out/2gpu-$b-shard.npz" ]; then
      echo "shard vs plain ($b): $(python3 benches/collective/compare_params.py \
        "$out/2gpu-$b.npz" "$out/2gpu-$b-shard.npz" --tol 1e-6)" | tee -a "$out/compare.txt"
    fi
  done
}
check() {  # the same run twice (bitwise the same?), and sharded against plain (issue 40's 1e-6)
  run 1gpu 1
  run 2gpu-b25 2 --bucket-mb 25 --save-params "$out/2gpu-b25.npz"
  run 2gpu-b25-again 2 --bucket-mb 25 --save-params "$out/2gpu-b25-again.npz"
  run 2gpu-b25-shard 2 --bucket-mb 25 --shard-optimizer --save-params "$out/2gpu-b25-shard.npz"
  for b in again shard; do
    if [ -f "$out/2gpu-b25.npz" ] && [ -f "$out/2gpu-b25-$b.npz" ]; then
      echo "b25 vs b25-$b: $(python3 benches/collective/compare_params.py \
        "$out/2gpu-b25.npz" "$out/2gpu-b25-$b.npz" --tol 1e-6)" | tee -a "$out/compare.txt"
    fi
  done
}
channels() {  # NCCL's channels (one SM each) taken from the backward pass while buckets overlap it
  run 1gpu 1
  run 2gpu-b25 2 --bucket-mb 25
  NCCL_MAX_NCHANNELS=4 run 2gpu-b25-ch4 2 --bucket-mb 25
  NCCL_MAX_NCHANNELS=8 run 2gpu-b25-ch8 2 --bucket-mb 25
  NCCL_MAX_NCHANNELS=4 run 2gpu-b25-ch4-again 2 --bucket-mb 25
}
profile() {
  run 1gpu-profile 1 --profile
  run 2gpu-b25-profile 2 --bucket-mb 25 --profile
}
extra() {
  run 1gpu-eager 1 --read-every 1
  run 2gpu-b25-eager 2 --bucket-mb 25 --read-every 1
  run 1gpu-workers 1 --num-workers 1
  run 2gpu-b25-workers 2 --bucket-mb 25 --num-workers 1
}
case "$part" in
  main) main ;;
  check) check ;;
  channels) channels ;;
  profile) profile ;;
  extra) extra ;;
  all) main; profile; extra ;;
  *) echo "run_x2.sh: unknown part '$part' (main, check, channels, profile, extra, all)" >&2; exit 2 ;;
esac

python3 - "$rows" <<'PY'
import json
import sys

PHASES = ("data", "forward", "backward", "collective", "loss_check", "optimizer", "metrics",
          "stop_check", "other")
rows = [line.rstrip("\n").split("|", 3) for line in open(sys.argv[1]) if line.strip()]
parsed = []
for name, world, result, parts in rows:
    try:
        data = json.loads(result)
    except ValueError:
        data = None
    ranks = {}
    for kv in filter(None, parts.split("\t")):
        rank, value = kv.split("=", 1)
        ranks[rank] = json.loads(value)
    parsed.append((name, int(world), result, data, ranks))
one = {}
for name, world, _, data, _ in parsed:  # the 1-GPU run each 2-GPU run compares with
    if world == 1 and data is not None:
        one[name.removeprefix("1gpu")] = data
print("\n| run | GPUs | items/s | vs 1 GPU | accuracy | step ms | cpu ms | "
      + " | ".join(PHASES) + " | wait ms (timer) | optim MB | GPU pool MB |")
print("|---" * (10 + len(PHASES)) + "|")
for name, world, result, data, ranks in parsed:
    if data is None:
        print(f"| {name} | {world} | {result} |")
        continue
    variant = next((v for v in ("-profile", "-eager", "-workers") if name.endswith(v)), "")
    ref = one.get(variant)  # the 1-GPU run of the same variant
    scale = (f"{data['items_per_s'] / ref['items_per_s']:.3f}x"
             if ref and world > 1 and ref.get("items_per_s") else "")
    for rank, b in sorted(ranks.items()):
        phases = " | ".join(f"{b['phases_ms'][p]:.2f}" for p in PHASES)
        head = (f"| {name} | {world} | {data['items_per_s']} | {scale} | "
                f"{data['valid_accuracy']} |" if rank == "0" else f"| rank {rank} | | | | |")
        tail = (f" {data.get('collective_wait_ms_per_step') or 0:.2f} | "
                f"{data.get('optim_state_mb')} | {data.get('gpu_pool_peak_mb', '')} |"
                if rank == "0" else " | | |")
        print(f"{head} {b['step_ms']:.2f} | {b['cpu_ms']:.2f} | {phases} |{tail}")
print("\nPhases are host milliseconds per step (rank 0, then each other rank), adding up to "
      "'step ms'. Without --profile the host runs ahead of the GPU and waits where it reads: "
      "metrics (the read-back every 16 steps), loss_check (with --read-every 1: every step, "
      "and what follows it in the step -- optimizer, metrics, stop_check, data -- is time "
      "the GPU may idle), data (if the batch's copy waits). With --profile every phase holds "
      "its GPU time.")
PY
