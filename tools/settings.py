"""The table of every `BURN_*` environment variable: `docs/settings.md` is generated from here.

    python tools/settings.py           # rewrite docs/settings.md
    python tools/settings.py --check   # exit 1 when it is stale or a variable read in src is missing

A variable is "read in src" when its name is a string literal in a `packages/*/src/**/*.py` file
(`os.environ.get("BURN_X")`, `ENV = "BURN_X"`). `tests/test_house.py` runs the check, so adding a
variable without a row here fails the suite.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "settings.md"
LITERAL = re.compile(r"""["'](BURN_[A-Z0-9_]+)["']""")

# name -> (default, meaning). Grouped by the package that reads it; keep each to one sentence.
SETTINGS: dict[str, tuple[str, str]] = {
    # burn-tensor: backend choice, checks, caches, process groups
    "BURN_BACKEND": ("unset: the best usable backend", "The backend `default_device()` uses (an entry-point name: `ndarray`, `opencl`, `cuda`, ...)."),
    "BURN_CHECKS": ("unset: checks where reads do not wait (NdArray, OpenCl on a CPU)", "Data-dependent checks (index bounds, integer division by zero, float -> int casts): `1` on every backend, `0` never."),
    "BURN_CACHE_DIR": ("`$XDG_CACHE_HOME/burn`, else `~/.cache/burn`", "Root of the on-disk caches (native kernels, OpenCL binaries, autotune winners); used only when owned by this user and private."),
    "BURN_COLLECTIVE": ("`tcp`", "The communicator `init_process_group()` builds: `tcp` or `nccl`."),
    "BURN_COLLECTIVE_TOKEN": ("set by the launcher, one per job", "Shared secret every rank presents when joining a process group (a stranger on the port is refused)."),
    "BURN_RANK": ("set by the launcher", "This process's rank in a multi-process run."),
    "BURN_LOCAL_RANK": ("the rank", "This process's rank on its node (picks its GPU)."),
    "BURN_WORLD_SIZE": ("set by the launcher", "Number of processes in the run; with `BURN_MASTER_PORT` it marks a process as part of a group."),
    "BURN_MASTER_ADDR": ("set by the launcher", "Host of rank 0's rendezvous store."),
    "BURN_MASTER_PORT": ("set by the launcher", "Port of rank 0's rendezvous store."),
    # burn-train
    "BURN_LAUNCH_DIR": ("set by the launcher", "Folder where each rank records the exception that ended it, so the launcher names the first failing rank."),
    # burn-ndarray
    "BURN_NUM_THREADS": ("the CPUs this process may run on", "Threads of NdArray's pool (`NdArray(num_threads=)` overrides)."),
    "BURN_NDARRAY_DEVICES": ("1", "Number of logical NdArray devices (`NdArray(num_devices=)` overrides)."),
    "BURN_NDARRAY_PARALLEL_MIN": ("2^18 elements", "Size from which an elementwise op is split across the pool's threads (`1` sends every op through the pool, for tests)."),
    "BURN_NDARRAY_NATIVE": ("`1`", "`0` turns NdArray's native C kernels off (numpy paths only)."),
    "BURN_NDARRAY_NATIVE_CONV": ("`1`", "Native conv path: `0` keeps numpy's conv with the other kernels native, `chunked` forces the chunked forward."),
    "BURN_NDARRAY_NATIVE_GEMM": ("`1`", "`0` keeps numpy's matmul (OpenBLAS's own threads) for `float_matmul` and the linear ops instead of the tiled GEMMs on the OpenMP team."),
    "BURN_NDARRAY_NATIVE_ATTENTION": ("`1`", "`0` keeps the Python-pool attention kernel instead of the native one (`_native/attn.c`)."),
    "BURN_NDARRAY_NATIVE_MIN": ("2^14 elements", "Size from which an op takes the native kernel rather than numpy."),
    "BURN_NDARRAY_LOAD_AWARE": ("`1`", "`0` starts every thread even when other processes keep cores busy (by default NdArray's native kernels and pool start as many threads as cores are free, from the load average)."),
    "BURN_NDARRAY_HUGEPAGE": ("unset: off", "`1` keeps transparent huge pages for large arrays (numpy's own `NUMPY_MADVISE_HUGEPAGE` does too)."),
    "BURN_NDARRAY_HEAP_KEEP": ("`1`", "`0` leaves glibc's malloc thresholds alone (by default, when the native kernels load, freed heap up to 1 GiB is kept for the next train step instead of being given back and faulted in again; glibc's own `MALLOC_*_` variables or `GLIBC_TUNABLES` also leave them alone)."),
    # burn-gpu
    "BURN_GPU_ATTENTION": ("`1`", "`0` sends Cuda's and OpenCl's `attention` to the matmul + softmax decomposition instead of burn_gpu's flash kernels (a before/after bench)."),
    "BURN_GPU_CONV_DIRECT": ("unset (`auto`): GPU devices", "burn_gpu's direct conv2d kernels for few channels (at most 32 output channels, c_in*kh*kw <= 144, float32/float64, one group) in Cuda's and OpenCl's conv2d and its two gradients: `0` keeps every call on im2col + GEMM (a before/after bench), `1` takes them on CPU devices (PoCL) too."),
    # burn-train data parallel
    "BURN_DDP_BUCKET_MB": ("`25`", "Size of the gradient buckets reduced while the backward pass runs (one process per device); `0` reduces after the pass."),
    "BURN_NCCL_MAX_CHANNELS": ("`8`", "Cap on NCCL's channels (sets `NCCL_MAX_NCHANNELS` before a communicator is made, unless that is set): each channel holds an SM the overlapped backward pass lacks; `0` leaves NCCL's own choice."),
    "BURN_DDP_SHARD_OPTIM": ("unset: off", "`1` shards the optimizer state across ranks (ZeRO stage 1) under the launcher."),
    # burn-opencl
    "BURN_OPENCL_DEVICE": ("unset: the first platform with a GPU, else any", "`p:d` makes device `d` of platform `p` device 0."),
    "BURN_OPENCL_HGEMM": ("`1`", "`0` sends OpenCl's float16/bfloat16 matmul on NVIDIA GPUs (compute capability 8.0+) through the float32 detour instead of its tensor-core kernels (`_hmatmul.py`); `mma` keeps Hopper (9.0) on the `mma.sync` kernel instead of the `wgmma` one."),
    "BURN_OPENCL_BUILD_OPTIONS": ("unset: none", "Extra OpenCL build options for Fusion's fused kernels and burn_gpu's kernel templates (read when a device's runtime is made; OpenCl's classic eager programs and matmul tiles never take them), e.g. `-cl-opt-disable`, which the workspace's tests use (the root `conftest.py`) because PoCL then compiles about 10x faster; set it empty to test optimized builds."),
    "BURN_AUTOTUNE": ("`1`", "`0` skips autotuning: the first candidate kernel runs."),
    # burn-cuda
    "BURN_CUDA_FAST": ("`1`", "`0` turns off the hot path (own kernels with little Python) for elementwise ops and small reductions."),
    "BURN_CUDA_DIRECT_GEMM": ("`1`", "`0` sends matmuls through `cupy.matmul` instead of the direct cuBLAS call."),
    "BURN_CUDA_LT": ("`1`", "`0` runs a float32/half `linear` with a bias as a cuBLAS GEMM and burn_gpu's `bias_add` kernel instead of one cuBLASLt GEMM with the bias in its epilogue (`_gemm_lt.py`), for A/B benches."),
    "BURN_CUDA_ATTENTION_MMA": ("`1`", "`0` turns off Cuda's tensor-core attention kernels (bfloat16/float16 `mma`, float32 3xTF32; forward and backward): those calls run burn_gpu's SIMT flash kernels (float16: the decomposition), for A/B benches."),
    "BURN_CUDA_ATTENTION_WARP_ROWS": ("`32`", "Query rows per warp of Cuda's bf16/f16 tensor-core attention forward at head dims <= 64: `32` (128-row blocks, each K/V fragment read once for two m16 tiles) or `16` (64-row blocks, fewer registers), for A/B benches."),
    "BURN_CUDA_ATTENTION_PLANS": ("`1`", "`0` runs every Cuda attention call through the general path (eligibility, routing, argument building per call) instead of replaying the launch plan recorded at the second call of the same dtypes, shapes, strides and flags (`_attention_plan.py`), for A/B benches of the host cost."),
    "BURN_CUDA_ATTENTION_PIPE": ("`1`", "`0` runs Cuda's session-17 tensor-core attention kernels (32-bit fragment loads from shared memory, synchronous tile loads; float32: the split K fragments held) instead of the ldmatrix + cp.async ones (`_attention_pipe*.py`, the default since the session-19 H200 run checked and timed them: bf16 s1024 fwd+bwd 2.12 -> 1.25 ms); read per call (each text is its own cached kernel), for A/B benches in one process."),
    "BURN_CUDA_ATTENTION_FUSED_BWD": ("unset: float32 only", "`1` runs Cuda's tensor-core attention backward in every dtype (bf16/f16/f32, head dims 32 and 64) as one fused pass per key block (`_attention_fused_bwd.py`: S, dP, dV, dK and dQ, 5 tile products instead of the two passes' 7, dQ summed in a float32 buffer by atomics, so its last bits may vary run to run) instead of the dQ pass then the dK/dV pass; `0` runs the two passes in every dtype. Unset, float32 runs fused (32% faster on the H200) and bf16/f16 the two passes (faster there). The fused dQ's last bits may vary run to run on a GPU (the atomics' order, as torch's memory-efficient SDPA backward); `0` is the deterministic choice. Read per call, for A/B benches in one process (`benches/probes/attention_kernels.py --fused-bwd`)."),
    "BURN_CUDA_ATTENTION_WGMMA": ("`1`", "`0` keeps Cuda's bfloat16/float16 attention forward at head dim 64 without mask or dropout on a compute-capability-9.0 GPU on `mma.sync` instead of Hopper's warpgroup MMA (`_attention_wgmma.py`: `wgmma.mma_async`, sm_90a through NVRTC, 128B-swizzled tiles; H200 b32 h8 s1024 d64 bf16: 0.230 ms against 0.296); its output and statistic feed the same backward. Read per call; launch plans key on it."),
    "BURN_CUDA_ATTENTION_WGMMA_BWD": ("`1`", "`0` keeps Cuda's bfloat16/float16 attention backward at head dim 64 without mask or dropout on a compute-capability-9.0 GPU on the `mma.sync` kernels instead of Hopper's one-pass warpgroup-MMA backward (`_attention_wgmma_bwd.py`: dQ added a 64-row tile at a time by one bulk reduction); an A/B switch. Read per call; launch plans key on it."),
    "BURN_CUDA_ATTENTION_SPLIT_OUT": ("`1`", "`0` makes Cuda's tensor-core attention kernels write their output and dQ/dK/dV contiguous [b, h, s, d] even when the input is the head-split view of a contiguous [b, s, h, d] projection (MHA's), instead of in that input's layout (so MHA's head merge is a view, not a copy kernel; `_attention_views.split_out`); the same bits either way, for A/B benches."),
    "BURN_CUDA_INT8_GEMM": ("`1`", "`0` sends the int8 x int8 matmul of two quantized tensors to burn_gpu's `qmm_i8` kernel instead of cuBLAS `cublasGemmEx`."),
    "BURN_CUDA_DRIVER_LAUNCH": ("`1`", "`0` launches kernels through cupy's RawKernel call instead of the driver API."),
    # burn-fusion
    "BURN_CUDA_CAPTURE_RESIDENT": ("`1`", "`0` makes step capture on Cuda split its CUDA graph around random draws and Adam updates (called anew between graphs at each replay) instead of running them inside the graph with their scalars read from the tape's device block (one graph per step)."),
    "BURN_CAPTURE_DEBUG": ("unset: off", "`1` prints step capture's decisions on stderr (why a recording was refused or aborted, what an aborted one put back, how the learning rate was bound)."),
    "BURN_FUSION_PASS_THROUGH": ("`1`", "`0` records every op; by default an op that ran alone twice after the same op with the same shapes runs at once on the inner backend (the learned pass-through)."),
    "BURN_FUSION_VECTOR": ("`4`", "Elements per work item of fused vector kernels: `0` (scalar only), `4` or `8`."),
    # burn-record
    "BURN_RECORD_MAX_RATIO": ("3", "A compressed record may decompress to at most this many times its size (plus a floor); more is refused."),
    "BURN_RECORD_MAX_OBJECTS": ("2^19", "Most containers and values one record (or a `.pt` file's object tree) may hold."),
    "BURN_RECORD_MMAP": ("unset: off", "`1` memory-maps record files when loading instead of reading them (a file truncated meanwhile then ends the process with SIGBUS)."),
    # burn-import
    "BURN_IMPORT_MAX_RATIO": ("2", "Bytes of tensors an imported weights file may expand to, per byte of file."),
    # burn-dataset
    "BURN_DATASET_CACHE_DIR": ("`burn-dataset` in the XDG cache folder", "Where downloaded data sets (MNIST, Hugging Face) are cached."),
    "BURN_MNIST_URL": ("Burn's MNIST mirror", "Base URL the MNIST files are downloaded from."),
}


def read_in_src() -> dict[str, list[str]]:
    """Every BURN_* name that is a string literal in a package's src, with the packages."""
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.glob("packages/*/src/**/*.py")):
        for name in LITERAL.findall(path.read_text()):
            found.setdefault(name, set()).add(path.relative_to(ROOT).parts[1])
    return {name: sorted(pkgs) for name, pkgs in sorted(found.items())}


def render() -> str:
    """`docs/settings.md`: one row per variable, in package order, then alphabetically."""
    used = read_in_src()
    missing = sorted(set(used) - set(SETTINGS))
    if missing:
        raise SystemExit(f"tools/settings.py: no row for {', '.join(missing)} (read in src)")
    lines = [
        "# Settings: every `BURN_*` environment variable",
        "",
        "Generated by `python tools/settings.py` from its `SETTINGS` table; `tests/test_house.py`",
        "fails when a `BURN_*` variable read in a package's `src/` has no row, or this file is stale.",
        "Constructor arguments (`NdArray(num_threads=...)`, `OpenCl(device_type=...)`) win over",
        "these where both exist. Names that are not environment variables are not listed: the C",
        "macros `BURN_NO_MVEC`, `BURN_OWN_ERF`, `BURN_OWN_TANH` of NdArray's kernels are compile",
        "flags. Switches read only by tests and benches (`BURN_KILL9_FULL`, `BURN_ONNX_WORKERS`,",
        "...) are documented where they are used (the package READMEs, CONTRIBUTING.md).",
        "",
        "| variable | read by | default | meaning |",
        "|---|---|---|---|",
    ]
    for name in sorted(SETTINGS, key=lambda n: (used.get(n, ["~"])[0], n)):
        default, meaning = SETTINGS[name]
        where = ", ".join(used.get(name, [])) or "(no longer read)"
        lines.append(f"| `{name}` | {where} | {default} | {meaning} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not DOC.exists() or DOC.read_text() != text:
            print("docs/settings.md is stale: run `python tools/settings.py`", file=sys.stderr)
            return 1
        return 0
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
