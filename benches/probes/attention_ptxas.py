"""ptxas's resource report of every tensor-core attention kernel (issue 36), no GPU needed.

    python benches/probes/attention_ptxas.py [--pipe 0,1] [--extras 0,1] [--dims 32,64,128]
        [--arch sm_90] [--fused] [--markdown]

Renders each kernel of `burn_cuda._kernel_source.ATTENTION_MMA` and `ATTENTION_TF32` (bf16 and
f16 `mma.sync`, f32 3xTF32; the forward at 1 and 2 m16 tiles per warp) as the Cuda backend
renders it for NVRTC, compiles all of them in one translation unit with
`nvcc -cubin -arch=ARCH --ptxas-options=-v` (each in a namespace of its own, its entry
renamed), and prints per kernel: registers per thread, stack frame, spill stores and loads
(bytes), static shared memory (bytes) and the blocks of 128 threads an sm_90 SM holds by those
two (64K registers allocated 8 per thread at a time; 228 KB of shared memory, 1 KB of it
reserved per block). `pipe` 0 is the session-17 text (scalar fragment
loads, synchronous tiles; `BURN_CUDA_ATTENTION_PIPE=0`), 1 the ldmatrix + cp.async text.
`--fused` adds the fused backward's kernels (`_kernel_source.ATTENTION_MMA_FUSED`,
`ATTENTION_TF32_FUSED`: `BURN_CUDA_ATTENTION_FUSED_BWD=1`, pipe form only).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pipe", default="0,1", help="comma list of pipe options (0 old, 1 new)")
    ap.add_argument("--extras", default="0,1", help="comma list: 0 without mask/dropout code")
    ap.add_argument("--dims", default="32,64,128", help="comma list of head dims")
    ap.add_argument("--arch", default="sm_90", help="nvcc -arch")
    ap.add_argument("--fused", action="store_true", help="add the fused backward's kernels")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    return ap


def variants(pipes, extras, dims, fused: bool = False) -> list[tuple]:
    """(kernel, dtype, head dim, tiles, extras, pipe) of every kernel Cuda can launch (`fused`:
    with the fused backward's)."""
    from burn_cuda._attention_mma import DTYPES, HEAD_DIMS
    from burn_cuda._kernel_source import ATTENTION_MMA_FUSED, ATTENTION_TF32_FUSED
    from burn_cuda._attention_mma_bwd import BWD_HEAD_DIMS
    from burn_cuda._attention_tf32 import TF32_HEAD_DIMS

    out = []
    for p in pipes:
        for x in extras:
            for dt in DTYPES:
                for d in HEAD_DIMS:
                    for t in (1, 2) if d <= 64 else (1,):
                        out.append(("attn_fwd_mma", dt, d, t, x, p))
                for n in ("attn_bwd_dq_mma", "attn_bwd_dkv_mma"):
                    out += [(n, dt, d, 1, x, p) for d in BWD_HEAD_DIMS]
            for n in ("attn_fwd_tf32", "attn_bwd_dq_tf32", "attn_bwd_dkv_tf32"):
                out += [(n, "float32", d, 1, x, p) for d in TF32_HEAD_DIMS]
    for x in extras if fused else ():  # the pipe form only
        for dt in DTYPES:
            out += [(n, dt, d, 1, x, 1) for n in ATTENTION_MMA_FUSED for d in BWD_HEAD_DIMS]
        out += [(n, "float32", d, 1, x, 1) for n in ATTENTION_TF32_FUSED for d in TF32_HEAD_DIMS]
    return [v for v in out if v[2] in dims]


def entry(v) -> str:
    name, dtype, d, tiles, extras, pipe = v
    return f"{name}_{dtype}_{d}_{tiles}_{int(extras)}_{int(pipe)}"


def unit(vs) -> str:
    """Every variant's text in one translation unit (as tests/test_attention_mma_cpu.py)."""
    from burn_cuda import _kernel_source

    parts = []
    for i, v in enumerate(vs):
        name, dtype, d, tiles, extras, pipe = v
        options = {"extras": bool(extras), "pipe": bool(pipe)}
        if tiles > 1:
            options["tiles"] = tiles
        src = _kernel_source.SOURCES[name](dtype, d, d, **options)
        macros = sorted(set(re.findall(r"^#define (\w+)", src, re.M)))
        undef = "".join(f"#undef {m}\n" for m in macros)
        body = f"namespace v{i} {{\n{src}\n}}\n"
        parts.append(f"#define {name} {entry(v)}\n{body}{undef}#undef {name}\n")
    return "".join(parts)


def report(text: str) -> dict:
    """entry -> {regs, stack, spill_st, spill_ld, smem} from ptxas -v's stderr."""
    out, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\w+)", line)
        if m:
            cur = m.group(1)
            out[cur] = {}
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill", line)
        if m and cur:
            out[cur].update(stack=int(m[1]), spill_st=int(m[2]), spill_ld=int(m[3]))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and cur:
            out[cur]["regs"] = int(m[1])
            sm = re.search(r"(\d+) bytes smem", line)
            out[cur]["smem"] = int(sm[1]) if sm else 0
    return out


def blocks(regs: int, smem: int, threads: int = 128) -> int:
    """Blocks of `threads` an sm_90 SM holds at `regs` registers and `smem` bytes each."""
    by_regs = 65536 // (threads * -(-regs // 8) * 8)
    return min(by_regs, 228 * 1024 // (smem + 1024), 32)


def compile_all(vs, arch: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "attn.cu"
        src.write_text(unit(vs))
        cmd = ["nvcc", "-cubin", f"-arch={arch}", "--ptxas-options=-v"]
        cmd += ["-o", str(Path(tmp) / "a.cubin"), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(proc.stderr[-4000:])
    return report(proc.stderr)


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    ints = lambda s: [int(x) for x in s.split(",") if x.strip()]  # noqa: E731
    vs = variants(ints(args.pipe), ints(args.extras), ints(args.dims), args.fused)
    res = compile_all(vs, args.arch)
    if args.markdown:
        print("| kernel | dtype | d | tiles | extras | pipe | regs | stack | spill st/ld | smem "
              "| blocks/SM |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|---|---|")
    for v in vs:
        r = res[entry(v)]
        name, dtype, d, tiles, extras, pipe = v
        spill = f"{r['spill_st']}/{r['spill_ld']}"
        nb = blocks(r["regs"], r["smem"])
        if args.markdown:
            print(f"| {name} | {dtype} | {d} | {tiles} | {extras} | {pipe} | {r['regs']} | "
                  f"{r['stack']} | {spill} | {r['smem']} | {nb} |")  # fmt: skip
        else:
            print(f"{name:18s} {dtype:9s} d{d:<4d} t{tiles} x{extras} p{pipe} regs {r['regs']:3d} "
                  f"stack {r['stack']:4d} spill {spill:9s} smem {r['smem']:6d} "
                  f"blocks {nb}")  # fmt: skip


if __name__ == "__main__":
    main()
