#!/usr/bin/env bash
# The GPU checks of work written without a GPU (session 18 wrote the code below blind:
# ldmatrix + cp.async attention kernels, attention launch plans, Fusion's recorded-prefix
# recipes and own-block fused launches, half dropout masks drawn in the half type, backward(g);
# session 19 ran every part once on the H200, and it stays the rerun script for them).
# One part per device call (each fits the 600 s a call may run), most important first:
#
#   source .whl/on-device.sh && bash tools/gpu_owed.sh speed     # ~8 min: attention figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh steps     # ~6 min: training-step figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh correct   # ~9 min: GPU suites, new code
#   source .whl/on-device.sh && bash tools/gpu_owed.sh fusion    # ~6 min: burn-fusion on Cuda
#   source .whl/on-device.sh && bash tools/gpu_owed.sh cpu16     # ~6 min: 16-core CPU rows
#   source .whl/on-device.sh && bash tools/gpu_owed.sh examples  # ~9 min: the examples on the GPU
#   source .whl/on-device.sh && bash tools/gpu_owed.sh lt        # ~9 min: session 20's checks
#   source .whl/on-device.sh && bash tools/gpu_owed.sh lt-speed  # ~7 min: session 20's figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh hgemm     # ~7 min: OpenCl's tensor-core matmuls
#   source .whl/on-device.sh && bash tools/gpu_owed.sh replay    # ~9 min: replay binding, step rows
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s21       # ~9 min: session 21's checks, figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh gen       # ~5 min: captured static-cache generation
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s22       # ~9 min: one-launch dropout, step rows
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s22b      # ~6 min: warp layer norm, the guide
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s23       # ~8 min: autocast's linear_half
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s23b      # ~9 min: fused attention backward
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s23c      # ~9 min: float32's fused default, steps
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s23d      # ~9 min: session 23's final figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s24       # ~9 min: float32 attention cp.async, figures
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s24b      # ~4 min: the opt-in wgmma forward, captured bf16
#   source .whl/on-device.sh && bash tools/gpu_owed.sh s25       # ~9 min: Hopper attention fwd + bwd, figures
#
# speed: attention kernels alone, new (ldmatrix/cp.async, the default since session 19) vs old
#   (BURN_CUDA_ATTENTION_PIPE=0) and 32 vs 16 query rows per warp (columns of one probe run); the
#   attention suite against torch SDPA (issue 36: <= 1.2x) with the default kernels, with the old
#   ones, and without launch plans.
# steps: issue 35's training_step rows (uncaptured Fusion <= Cuda, captured vs torch's CUDA graph
#   and torch.compile); issue 34's transformer_precision on fusion-cuda.
# correct: the tensor-core attention GPU tests (new vs old kernels), burn-cuda's GPU tests, the
#   Cuda conformance subsets the new code reaches (f32 and bf16/f16; attention with the old
#   kernels too). fusion: all of burn-fusion on Cuda (session 19's run of it crashed in the
#   stand-in tests, which were handed the GPU's Fusion(Cuda()): fixed in tests/cpu_backend.py).
# cpu16: issue 36's transformer f32 step on Autodiff(NdArray()) vs torch CPU, 16 threads each.
# examples: issue 36's text examples on Cuda and OpenCl (their READMEs' accuracy / loss), issue
#   35's `guide train --backend fusion-cuda --capture` against the eager run's accuracy, and
#   generation with and without the cache (>= 5x, the same tokens).
# Logs and JSON go under $OUT (or ./gpu-out); each step has a time limit, and a step is skipped
# once BUDGET_S (default 540 s, under a device call's 600) is spent; the table comes last.
set -u
part=${1:?"usage: bash tools/gpu_owed.sh speed|steps|correct|fusion|cpu16|examples|lt|lt-speed|hgemm|replay|s21|s22|s22b|s23|s23b|s23c|s23d|s24|s24b|s25|gen"}
out=${OUT:-gpu-out}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
src=""
for d in packages/*/src examples/*/src; do src="$src:$PWD/$d"; done
export PYTHONPATH="${src#:}:$PWD${PYTHONPATH:+:$PYTHONPATH}"
# empty caches, as on a user's first run (kernels compile inside the first timed steps' warm-up)
fresh=$(mktemp -d)
export XDG_CACHE_HOME="$fresh/xdg" CUPY_CACHE_DIR="$fresh/cupy" POCL_CACHE_DIR="$fresh/pocl"
PYTEST=(python3 -m pytest -p no:cacheprovider -q -o addopts="" --import-mode=importlib)
summary=()
budget=${BUDGET_S:-540}
step() {  # step NAME LIMIT CMD...: run with a limit, log, keep pytest's or the last line
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS left=$((budget - SECONDS))
  if [ "$left" -le 15 ]; then
    summary+=("$(printf '%-22s | skipped: BUDGET_S (%s s) spent' "$name" "$budget")")
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$? last
  last=$(grep -E "[0-9]+ (passed|failed|error)" "$out/$name.log" | tail -1)
  [ -z "$last" ] && last=$(tail -1 "$out/$name.log")
  [ "$rc" = 124 ] && last="TIMED OUT after $limit s; $last"
  summary+=("$(printf '%-22s | rc=%-3s | %4s s | %s' "$name" "$rc" "$((SECONDS - t0))" \
    "${last:0:110}")")
}
# the two steps most parts end with: issue 35's training_step rows (interleaved, captured too)
# and issue 34's transformer_precision on Cuda (LIMIT: each step's time limit)
training_rows() {
  step training-rows "$1" python3 -m benches.training_step --backends cuda,fusion-cuda --capture \
    --interleave 5 --out "$out/training_step_rows.json"
}
precision_cuda() {
  step precision "$1" python3 -m benches transformer_precision --backend cuda \
    --torch-device cuda --sizes gpu --out "$out/precision"
}
attn=(python3 benches/probes/attention_kernels.py --dtypes bfloat16,float16,float32 --seqs 128,1024)
case $part in
speed)
  step attn-kernels 150 "${attn[@]}" --json "$out/attention_kernels.json"
  suite=(python3 -m benches attention --backend cuda --torch-device cuda --sizes gpu --repeats 5)
  step attn-suite 120 "${suite[@]}" --out "$out/attention"
  step attn-suite-old 120 env BURN_CUDA_ATTENTION_PIPE=0 "${suite[@]}" --out "$out/attention-old"
  step attn-suite-noplans 100 env BURN_CUDA_ATTENTION_PLANS=0 "${suite[@]}" \
    --out "$out/attention-noplans"
  # its columns: the new kernels (mma), their forward at 16 rows per warp, the old ones, SIMT, torch
  echo "== attention kernels alone (ms)"; tail -30 "$out/attn-kernels.log"
  for f in attn-suite attn-suite-old attn-suite-noplans; do
    echo "== $f"; grep -E "burn/torch|target|fwd\+bwd" "$out/$f.log" | tail -24
  done
  ;;
steps)
  step training-rows 240 python3 -m benches.training_step --backends cuda,fusion-cuda --capture --interleave 5 \
    --out "$out/training_step_rows.json"
  step precision 200 python3 -m benches transformer_precision --backend fusion-cuda \
    --torch-device cuda --sizes gpu --out "$out/precision"
  echo "== precision"; grep -E "burn/torch|target|step" "$out/precision.log" | tail -24
  echo "== training_step rows"; tail -20 "$out/training-rows.log"
  ;;
correct)
  step attn-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_mma_gpu.py \
    packages/burn-cuda/tests/test_attention_gpu.py
  step cuda-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_gpu.py \
    packages/burn-cuda/tests/test_bf16.py packages/burn-cuda/tests/test_direct_ops_gpu.py \
    packages/burn-cuda/tests/test_capture_resident_gpu.py \
    packages/burn-cuda/tests/test_copy_many_gpu.py \
    packages/burn-cuda/tests/test_optim_many_gpu.py packages/burn-cuda/tests/test_launch_gpu.py
  step conformance 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_conformance.py \
    -k "attention or random or dropout or bernoulli or softmax or layer_norm or adam or select"
  step conformance-half 120 env BURN_CUDA_CONFIGS=bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "attention or random or dropout or bernoulli"
  step conformance-old 90 env BURN_CUDA_ATTENTION_PIPE=0 \
    BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k attention
  ;;
fusion)
  # burn-fusion's whole package on Cuda (~300 s alone): the recipes and prepared launches
  step fusion-cuda 530 env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" packages/burn-fusion/tests
  ;;
cpu16)
  export BURN_NUM_THREADS=16 OPENBLAS_NUM_THREADS=16 OMP_WAIT_POLICY=PASSIVE
  step xformer-step 300 python3 -m benches transformer_encoder --repeats 3 --out "$out/cpu16"
  step xformer-ops 200 python3 benches/probes/xformer_ops.py --threads 16 --batch 32 --steps 3
  echo "== transformer_encoder, 16 threads each"; tail -20 "$out/xformer-step.log"
  echo "== per op group"; tail -30 "$out/xformer-ops.log"
  ;;
examples)
  for b in cuda opencl; do
    step "text-class-$b" 150 python3 -m text_classification.cli --backend "$b" \
      --json "$out/text_classification_$b.json"
    step "text-gen-$b" 120 python3 -m text_generation.cli --backend "$b"
  done
  step guide-eager 90 python3 -m guide.cli train --backend fusion-cuda --epochs 1 \
    --artifact-dir "$out/guide-eager"
  step guide-captured 90 python3 -m guide.cli train --backend fusion-cuda --epochs 1 --capture \
    --artifact-dir "$out/guide-captured"
  step generation 120 python3 benches/attention/bench_generation.py --backend cuda --tokens 256 \
    --out "$out/generation"
  # the static cache's one-token step captured as a CUDA graph (mode "static"; issue 36)
  step generation-fusion 120 python3 benches/attention/bench_generation.py --backend fusion-cuda \
    --tokens 256 --out "$out/generation-fusion"
  for f in text-class-cuda text-class-opencl text-gen-cuda text-gen-opencl guide-eager \
    guide-captured generation generation-fusion; do
    echo "== $f"; tail -10 "$out/$f.log"
  done
  ;;
lt)
  # session 20 (blind): cuBLASLt's bias epilogue in Cuda's linear, stable_rank's 32 lanes per
  # index, attention outputs in the inputs' head-split layout, copy_many's checks; then the
  # layer-norm group sizes and the training-step rows interleaved
  step lt-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_gemm_lt_gpu.py \
    packages/burn-cuda/tests/test_gemm_gpu.py packages/burn-cuda/tests/test_capture_blas_gpu.py \
    packages/burn-cuda/tests/test_capture_resident_gpu.py \
    packages/burn-cuda/tests/test_copy_many_gpu.py packages/burn-cuda/tests/test_direct_ops_gpu.py \
    packages/burn-cuda/tests/test_attention_mma_gpu.py packages/burn-cuda/tests/test_attention_gpu.py \
    packages/burn-cuda/tests/test_attention_layout_gpu.py
  step lt-conf 120 env BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py \
    -k "linear or attention or layer_norm or select or embedding or matmul"
  step norm 60 python3 benches/probes/norm_kernels.py
  step lt-rows 200 python3 -m benches.training_step --backends cuda,fusion-cuda --capture \
    --interleave 5 --out "$out/training_step_rows.json"
  echo "== layer norm by group size"; tail -14 "$out/norm.log"
  echo "== training_step rows (interleaved)"; tail -28 "$out/lt-rows.log"
  ;;
lt-speed)
  step lt-profile 100 python3 benches/probes/capture_profile.py --rows transformer --top 16
  step lt-profile-old 80 env BURN_CUDA_ATTENTION_SPLIT_OUT=0 BURN_CUDA_LT=0 \
    python3 benches/probes/capture_profile.py --rows transformer --top 16
  step precision 200 python3 -m benches transformer_precision --backend fusion-cuda \
    --torch-device cuda --sizes gpu --out "$out/precision"
  step attn-suite 120 python3 -m benches attention --backend cuda --torch-device cuda \
    --sizes gpu --repeats 5 --out "$out/attention"
  for f in lt-profile lt-profile-old; do
    echo "== $f"; grep -E "^==|GPU span|ms .*x  " "$out/$f.log" | grep -v -- "->" | head -40
  done
  echo "== precision"; grep -E "burn/torch|target|step" "$out/precision.log" | tail -24
  echo "== attention"; grep -E "burn/torch|target|fwd\+bwd" "$out/attn-suite.log" | tail -24
  ;;
hgemm)
  step hmatmul-tests 200 "${PYTEST[@]}" packages/burn-opencl/tests/test_hmatmul.py
  step half-gpu 200 env BURN_OPENCL_TEST_DEVICE_TYPE=gpu "${PYTEST[@]}" \
    packages/burn-opencl/tests/test_half.py
  step hgemm-probe 120 python3 benches/probes/opencl_hgemm.py --json "$out/hgemm.json"
  step hgemm-wg-probe 150 python3 benches/probes/opencl_hgemm.py --kernel wgmma \
    --json "$out/hgemm-wg.json"
  step matmul-suite 150 python3 -m benches matmul --backend opencl --torch-device cuda \
    --sizes gpu --out "$out/matmul-opencl"
  echo "== hgemm probe (mma.sync)"; tail -4 "$out/hgemm-probe.log"
  echo "== hgemm probe (wgmma)"; tail -4 "$out/hgemm-wg-probe.log"
  echo "== matmul suite (OpenCl on the H200)"; grep -E "x[0-9]+ |target" "$out/matmul-suite.log" | tail -12
  ;;
replay)
  step capture-cuda 200 env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" \
    packages/burn-fusion/tests/test_capture.py packages/burn-fusion/tests/test_capture_bind.py \
    packages/burn-cuda/tests/test_copy_many_gpu.py
  step replay-host 150 python3 benches/probes/replay_host.py --tape cuda --size full --sync \
    --compare --runs 9 --top 15
  training_rows 240
  echo "== replay host"; grep -E "before|tape|after|total|off|on " "$out/replay-host.log" | head -20
  echo "== training_step rows"; tail -20 "$out/training-rows.log"
  ;;
s21)
  step cuda-tests 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_gemm_lt_gpu.py \
    packages/burn-opencl/tests/test_hmatmul.py packages/burn-fusion/tests/test_capture_bind.py
  step cuda-conf 200 env BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "linear or any or all_dim or bool"
  step profile 100 python3 benches/probes/capture_profile.py --rows transformer --top 12
  training_rows 200
  for b in fusion-cuda cuda; do
    step "gen-$b" 100 python3 benches/attention/bench_generation.py --backend "$b" --tokens 256 \
      --out "$out/generation-$b"
  done
  echo "== profile"; grep -E "^==|GPU span|ms .*x  " "$out/profile.log" | grep -v -- "->" | head -24
  echo "== training_step rows"; tail -20 "$out/training-rows.log"
  for b in fusion-cuda cuda; do echo "== generation $b"; grep -E "ms/token|speedup|same" "$out/gen-$b.log"; done
  ;;
s22)
  step dropout-conf 150 env BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "dropout or random or seed"
  step capture-cuda 150 env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" \
    packages/burn-fusion/tests/test_capture.py packages/burn-fusion/tests/test_capture_resident.py
  training_rows 200
  precision_cuda 150
  echo "== training_step rows"; tail -20 "$out/training-rows.log"
  echo "== precision (Cuda)"; grep -E "burn/torch|target|step" "$out/precision.log" | tail -24
  ;;
s22b)
  step norm-conf 150 env BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "layer_norm"
  step fusion-dropout 120 env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" \
    packages/burn-fusion/tests/test_conformance.py -k "dropout or layer_norm"
  step norm-probe 90 python3 benches/probes/norm_kernels.py --groups warp,256 \
    --shapes 4096x512,4096x768,4096x1024 --dtypes float32,bfloat16 --reps 30
  step guide-eager 90 python3 -m guide.cli train --backend fusion-cuda --epochs 1 \
    --artifact-dir "$out/guide-eager"
  step guide-captured 90 python3 -m guide.cli train --backend fusion-cuda --epochs 1 --capture \
    --artifact-dir "$out/guide-captured"
  echo "== norm probe"; tail -13 "$out/norm-probe.log"
  for f in guide-eager guide-captured; do echo "== $f"; grep -iE "valid|accuracy" "$out/$f.log" | tail -3; done
  ;;
s23)
  step linear-half-gpu 120 "${PYTEST[@]}" packages/burn-cuda/tests/test_linear_half_gpu.py \
    packages/burn-cuda/tests/test_gemm_lt_gpu.py
  step linear-conf 200 env BURN_CUDA_CONFIGS=f32-i32,bf16-i32,f16-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "linear"
  precision_cuda 150
  step precision-fusion 200 python3 -m benches transformer_precision --backend fusion-cuda \
    --torch-device cuda --sizes gpu --out "$out/precision-fusion"
  for f in precision precision-fusion; do
    echo "== $f"; grep -E "burn/torch|target|step" "$out/$f.log" | tail -24
  done
  ;;
s23b)
  step fused-bwd-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py \
    packages/burn-cuda/tests/test_attention_mma_gpu.py
  step attn-kernels 150 "${attn[@]}" --fused-bwd --json "$out/attention_kernels.json"
  suite=(python3 -m benches attention --backend cuda --torch-device cuda --sizes gpu --repeats 5)
  step attn-suite 120 "${suite[@]}" --out "$out/attention"
  step attn-suite-fused 120 env BURN_CUDA_ATTENTION_FUSED_BWD=1 "${suite[@]}" \
    --out "$out/attention-fused"
  step host-calls 60 python3 benches/probes/cupy_host_calls.py
  echo "== attention kernels alone (ms)"; tail -14 "$out/attn-kernels.log"
  for f in attn-suite attn-suite-fused; do
    echo "== $f"; grep -E "burn/torch|target|fwd\+bwd" "$out/$f.log" | tail -12
  done
  echo "== host calls"; tail -12 "$out/host-calls.log"
  ;;
s23c)
  step fused-default-gpu 120 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py
  step attn-conf-f32 150 env BURN_CUDA_CONFIGS=f32-i32 "${PYTEST[@]}" \
    packages/burn-cuda/tests/test_conformance.py -k "attention"
  training_rows 220
  precision_cuda 120
  echo "== training_step rows"; tail -20 "$out/training-rows.log"
  echo "== precision (Cuda)"; grep -E "burn/torch|target|^(fp32|bf16)" "$out/precision.log" | tail -12
  ;;
s23d)
  step attn-gpu 180 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_mma_gpu.py \
    packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py \
    packages/burn-cuda/tests/test_attention_layout_gpu.py packages/burn-cuda/tests/test_attention_gpu.py
  step attn-kernels 150 "${attn[@]}" --fused-bwd --json "$out/attention_kernels.json"
  suite=(python3 -m benches attention --backend cuda --torch-device cuda --sizes gpu --repeats 5)
  step attn-suite 120 "${suite[@]}" --out "$out/attention"
  precision_cuda 150
  training_rows 150
  echo "== attention kernels alone (ms)"; tail -13 "$out/attn-kernels.log"
  echo "== attn-suite"; grep -E "^(fwd|target)" "$out/attn-suite.log" | grep -v "^target" | head -20
  echo "== precision (Cuda)"; grep -E "burn/torch|^(fp32|bf16)" "$out/precision.log" | tail -8
  echo "== training_step rows"; tail -27 "$out/training-rows.log"
  ;;
s24)
  step attn-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_mma_gpu.py \
    packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py packages/burn-cuda/tests/test_attention_gpu.py
  step attn-kernels 120 python3 benches/probes/attention_kernels.py --dtypes float32,bfloat16 \
    --seqs 128,1024 --fused-bwd --json "$out/attention_kernels.json"
  suite=(python3 -m benches attention --backend cuda --torch-device cuda --sizes gpu --repeats 5)
  step attn-suite 120 "${suite[@]}" --out "$out/attention"
  training_rows 200
  precision_cuda 120
  echo "== attention kernels alone (ms)"; tail -9 "$out/attn-kernels.log"
  echo "== attn-suite"; grep -E "^(fwd)" "$out/attn-suite.log" | head -20
  echo "== training_step rows"; tail -27 "$out/training-rows.log"
  echo "== precision (Cuda)"; grep -E "burn/torch|^(fp32|bf16)" "$out/precision.log" | tail -8
  ;;
s24b)
  step wgmma-layouts 60 python3 benches/probes/wgmma_layouts.py
  step attn-gpu 150 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_wgmma_gpu.py \
    packages/burn-cuda/tests/test_attention_mma_gpu.py packages/burn-cuda/tests/test_attention_gpu.py \
    packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py packages/burn-cuda/tests/test_attention_layout_gpu.py
  step attn-kernels-wgmma 60 env BURN_CUDA_ATTENTION_WGMMA=1 python3 benches/probes/attention_kernels.py \
    --dtypes bfloat16,float16 --seqs 128,1024
  step precision-fusion 230 python3 -m benches transformer_precision --backend fusion-cuda \
    --torch-device cuda --sizes gpu --out "$out/precision-fusion"
  echo "== wgmma layouts"; tail -9 "$out/wgmma-layouts.log"
  echo "== attention kernels alone, wgmma forward (ms)"; tail -5 "$out/attn-kernels-wgmma.log"
  echo "== precision (Fusion)"; grep -E "burn/torch|^(fp32|bf16)" "$out/precision-fusion.log" | tail -8
  ;;
s25)
  step attn-gpu 200 "${PYTEST[@]}" packages/burn-cuda/tests/test_attention_wgmma_gpu.py \
    packages/burn-cuda/tests/test_attention_wgmma_bwd_gpu.py packages/burn-cuda/tests/test_attention_mma_gpu.py \
    packages/burn-cuda/tests/test_attention_gpu.py packages/burn-cuda/tests/test_attention_fused_bwd_gpu.py \
    packages/burn-cuda/tests/test_attention_layout_gpu.py
  step attn-kernels 100 python3 benches/probes/attention_kernels.py --dtypes bfloat16,float32 \
    --seqs 128,1024 --json "$out/attention_kernels.json"
  suite=(python3 -m benches attention --backend cuda --torch-device cuda --sizes gpu --repeats 5)
  step attn-suite 120 "${suite[@]}" --out "$out/attention"
  precision_cuda 150
  training_rows 170
  echo "== attention kernels alone (ms)"; tail -9 "$out/attn-kernels.log"
  echo "== attn-suite"; grep -E "burn/torch|target|fwd\+bwd" "$out/attn-suite.log" | tail -24
  echo "== precision (Cuda)"; grep -E "burn/torch|^(fp32|bf16)" "$out/precision.log" | tail -8
  echo "== training_step rows"; tail -27 "$out/training-rows.log"
  ;;
gen)
  step capture-gen-cuda 200 env BURN_FUSION_TEST_INNER=cuda "${PYTEST[@]}" \
    packages/burn-fusion/tests/test_capture_generation.py
  for b in fusion-cuda cuda; do
    step "gen-$b" 150 python3 benches/attention/bench_generation.py --backend "$b" --tokens 256 \
      --out "$out/generation-$b"
  done
  for b in fusion-cuda cuda; do echo "== generation $b"; tail -12 "$out/gen-$b.log"; done
  ;;
*) echo "unknown part $part: speed, steps, correct, fusion, cpu16, examples, lt, lt-speed, hgemm, replay, s21, s22, s22b, s23, s23b, s23c, s23d, s24, s24b or gen" >&2; exit 2 ;;
esac
rm -rf "$fresh"
echo "== summary ($part)"
printf '%s\n' "${summary[@]}"
