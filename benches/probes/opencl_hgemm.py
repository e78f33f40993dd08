"""Issue 34: OpenCl's half GEMM on NVIDIA tensor cores (`burn_opencl._hgemm`) against torch.

    python benches/probes/opencl_hgemm.py [--kernel mma|wgmma] [--size 4096] [--repeats 20]
                                          [--json FILE] [--ptx DIR]
    python benches/probes/opencl_hgemm.py --occupancy

On the GPU machine (NVIDIA's OpenCL registered by `.whl/on-device.sh`): for float16 and
bfloat16 and each kernel variant (`_hgemm.probe_variants`: block and warp tiles, k-step,
local stages, block rasterisation), builds the kernel (a failure prints the
build log's head), prints the PTX target the driver compiled for, checks C against numpy
(float64 products of the same half inputs) on uneven shapes and a batch of 2, then times
C [size, size] = A @ B (OpenCL profiling events, median of --repeats) in TFLOP/s beside torch's
`torch.matmul` of the same dtype on the same GPU (CUDA events; torch.backends TF32 irrelevant
for half). The issue's target: the best variant's float16 figure >= 50% of torch's.
`--kernel wgmma` does the same for `_hgemm_wg`'s variants (Hopper's `wgmma`, built through a
patched PTX binary; the first two differ in how the descriptors' offsets are read, one of them
computes C). `--occupancy` prints instead how many 256-item work-groups one SM runs at once by
the local memory each declares (NVIDIA's OpenCL picks the shared-memory carveout itself: 5 at
38 KB, 4 at 48 KB on the H200, so local memory does not limit the kernels' residency).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096, help="M = N = K of the timed GEMM")
    ap.add_argument("--repeats", type=int, default=20, help="timed launches per cell (median)")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument("--dtypes", default="float16,bfloat16", help="comma-separated storage types")
    ap.add_argument("--variant", type=int, default=None,
                    help="run only this index of probe_variants() in this process (the default "
                    "runs each in a child process: a faulting kernel kills its CUDA context)")
    ap.add_argument("--ptx", type=Path, default=None, help="write each variant's PTX in this folder")
    ap.add_argument("--kernel", choices=("mma", "wgmma"), default="mma",
                    help="mma: `_hgemm` (mma.sync, compute capability 8.0+); wgmma: `_hgemm_wg` "
                    "(Hopper's wgmma through a patched PTX binary)")
    ap.add_argument("--occupancy", action="store_true",
                    help="only measure how many 256-item work-groups share an SM at a time, by "
                    "the local memory each declares (NVIDIA's OpenCL sets the shared-memory "
                    "carveout itself)")
    return ap


_OCC = r"""
__kernel void occ(__global ulong* out, const ulong spin) {
  __local float buf[LB / 4];
  uint smid; ulong t0, t1;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const int l = get_local_id(0);
  for (int i = l; i < LB / 4; i += get_local_size(0)) buf[i] = (float)i;
  barrier(CLK_LOCAL_MEM_FENCE);
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)); } while (t1 - t0 < spin);
  const size_t g = get_group_id(0);
  if (l == 0) { out[3 * g] = smid + (buf[(LB / 4) - 1] < 0.0f ? 1 : 0); out[3 * g + 1] = t0; out[3 * g + 2] = t1; }
}
"""


def occupancy(cl, ctx, q) -> None:
    """Work-groups of 256 items resident on one SM at once, by declared local memory: each
    group spins 200 us after filling its local array and records its SM and start/end times."""
    groups = 132 * 8
    for kb in (8, 16, 24, 28, 32, 36, 38, 40, 44, 48):
        lb = kb * 1024 - (64 if kb == 48 else 0)
        prg = cl.Program(ctx, f"#define LB {lb}\n" + _OCC).build()
        out = np.zeros(3 * groups, np.uint64)
        d = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, size=out.nbytes)
        prg.occ(q, (groups * 256,), (256,), d, np.uint64(200_000))
        cl.enqueue_copy(q, out, d)
        q.finish()
        rec = out.reshape(-1, 3)
        best = 0
        for sm in np.unique(rec[:, 0]):
            ev = sorted([(int(a), 1) for a in rec[rec[:, 0] == sm, 1]]
                        + [(int(b), -1) for b in rec[rec[:, 0] == sm, 2]])
            cur = 0
            for _, d_ in ev:
                cur += d_
                best = max(best, cur)
        print(f"local {lb:6d} B: at most {best} work-groups of 256 on one SM "
              f"({len(np.unique(rec[:, 0]))} SMs used)", flush=True)


def to_bits(x: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values -> uint16 storage bits (float16: numpy's rounding; bfloat16: nearest
    even of the upper half)."""
    if dtype == "float16":
        return x.astype(np.float16).view(np.uint16)
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return u.astype(np.uint16)


def from_bits(b: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float16":
        return b.view(np.float16).astype(np.float64)
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def label(t) -> str:
    """A launch shape in a few characters: block, warps (wgmma: warpgroups), BK, stages, raster
    (wgmma: which descriptor offsets are swapped)."""
    if not hasattr(t, "warps_m"):  # _hgemm_wg.WTile
        return (f"{t.bm}x{t.bn}x{t.bk} wg{t.bm // 64} s{t.stages} wait{t.wait} "
                f"{'swz' if t.swz else 'plain'} swap{int(t.swap_a)}{int(t.swap_b)}")
    return f"{t.bm}x{t.bn}x{t.bk} w{t.warps_m}x{t.warps_n} s{t.stages} r{t.raster}"


def nvidia_device(cl):
    for p in cl.get_platforms():
        for d in p.get_devices():
            if "NVIDIA" in p.name and d.type & cl.device_type.GPU:
                return d
    return None


def ptx_target(prg) -> str:
    try:
        text = prg.get_info(__import__("pyopencl").program_info.BINARIES)[0].decode(errors="replace")
    except Exception as e:  # noqa: BLE001 - a probe reports what it can
        return f"(no binary: {e})"
    keep = [ln.strip() for ln in text.splitlines() if ln.strip().startswith((".version", ".target"))]
    return " ".join(keep[:2])


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    sys.path[:0] = [str(ROOT / "packages" / "burn-opencl" / "src")]
    import pyopencl as cl
    from burn_opencl import _hgemm as hg
    from burn_opencl import _hgemm_wg as wg

    mod = wg if args.kernel == "wgmma" else hg

    dev = nvidia_device(cl)
    if dev is None:
        print("opencl_hgemm: no NVIDIA OpenCL device (run .whl/on-device.sh on the GPU machine)")
        return 1
    cc = (getattr(dev, "compute_capability_major_nv", "?"), getattr(dev, "compute_capability_minor_nv", "?"))
    print(f"device: {dev.name}, compute capability {cc}, local mem {dev.local_mem_size} B")
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    if args.occupancy:
        occupancy(cl, ctx, q)
        return 0
    mf = cl.mem_flags
    rng = np.random.default_rng(0)
    rows = []
    n = args.size
    flops = 2.0 * n * n * n
    for dtype in args.dtypes.split(","):
        # correctness shapes: M not a tile multiple, N and K multiples of 8 only, batch 2
        cm, cn, ck, cb = 200, 136, 72, 2
        a32 = rng.standard_normal((cb, cm, ck)).astype(np.float32)
        b32 = rng.standard_normal((cb, ck, cn)).astype(np.float32)
        abits, bbits = to_bits(a32, dtype), to_bits(b32, dtype)
        want = from_bits(abits, dtype) @ from_bits(bbits, dtype)
        big_a = to_bits(rng.standard_normal((n, n)).astype(np.float32), dtype)
        big_b = to_bits(rng.standard_normal((n, n)).astype(np.float32), dtype)
        variants = list(enumerate(mod.probe_variants()))
        if args.variant is None:
            for i, var in variants:
                rows.append(child(args, dtype, i, var))
            continue
        for _, var in variants[args.variant : args.variant + 1]:
            name = f"{dtype} {label(var)}"
            row = {"dtype": dtype, "tile": label(var)}
            try:
                if mod is wg:
                    prg = wg.build(ctx, dev, dtype, var)
                else:
                    prg = cl.Program(ctx, hg.render(dtype, var)).build()
            except Exception as e:  # noqa: BLE001
                msg = str(e)
                print(f"{name}: BUILD FAILED\n{msg[:1500]}")
                rows.append({**row, "error": "build: " + msg[:300]})
                continue
            print(f"{name}: built; {ptx_target(prg)}")
            if args.ptx:
                args.ptx.mkdir(parents=True, exist_ok=True)
                text = prg.get_info(cl.program_info.BINARIES)[0]
                (args.ptx / f"{dtype}-{args.variant}.ptx").write_bytes(text)
            kern = prg.hgemm
            da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=abits)
            db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=bbits)
            dc = cl.Buffer(ctx, mf.READ_WRITE, size=cb * cm * cn * 2)
            kern(q, mod.grid(cm, cn, cb, var), (var.threads, 1, 1), dc, da, db,
                 *hg.args(cm, cn, ck, ck, cn, cm * ck, ck * cn, cm * cn))  # fmt: skip
            got = np.empty((cb, cm, cn), np.uint16)
            cl.enqueue_copy(q, got, dc)
            q.finish()
            err = float(np.max(np.abs(from_bits(got, dtype) - want)) / np.max(np.abs(want)))
            row["max_rel_err"] = err
            ok = err < (2e-3 if dtype == "float16" else 1.6e-2)
            row["correct"] = ok
            da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=big_a)
            db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=big_b)
            dc = cl.Buffer(ctx, mf.READ_WRITE, size=n * n * 2)
            call = (mod.grid(n, n, 1, var), (var.threads, 1, 1), dc, da, db, *hg.args(n, n, n, n, n))
            for _ in range(3):
                kern(q, *call)
            q.finish()
            times = []
            for _ in range(args.repeats):
                ev = kern(q, *call)
                ev.wait()
                times.append((ev.profile.end - ev.profile.start) * 1e-9)
            t = statistics.median(times)
            row["ms"] = t * 1e3
            row["tflops"] = flops / t / 1e12
            print(f"{name}: max rel err {err:.2e} ({'ok' if ok else 'WRONG'}), "
                  f"{t * 1e3:.3f} ms, {flops / t / 1e12:.1f} TFLOP/s")  # fmt: skip
            rows.append(row)
    if args.variant is not None:
        if args.json:
            args.json.write_text(json.dumps(rows))
        return 0
    torch_rows = torch_figures(n, args.dtypes.split(","), args.repeats)
    print(f"\n== {n}^3 GEMM, TFLOP/s (median of {args.repeats})")
    for dtype in args.dtypes.split(","):
        best = max((r for r in rows if r["dtype"] == dtype and r.get("correct")),
                   key=lambda r: r["tflops"], default=None)  # fmt: skip
        tt = torch_rows.get(dtype)
        b = f"{best['tflops']:.1f} ({best['tile']})" if best else "none correct"
        ratio = f"{best['tflops'] / tt:.0%}" if best and tt else "-"
        print(f"{dtype:9s} | OpenCl best {b} | torch {tt if tt is None else f'{tt:.1f}'} | {ratio}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "torch": torch_rows, "size": n}, indent=1))
    return 0


def child(args, dtype: str, index: int, var: dict) -> dict:
    """Variant `index` of `dtype` in a child process: its row, or the failure it printed."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        js = Path(d) / "row.json"
        cmd = [sys.executable, __file__, "--size", str(args.size), "--repeats", str(args.repeats),
               "--dtypes", dtype, "--variant", str(index), "--json", str(js),
               "--kernel", args.kernel]  # fmt: skip
        if args.ptx:
            cmd += ["--ptx", str(args.ptx)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        print(r.stdout.strip())
        if js.exists() and json.loads(js.read_text()):
            return json.loads(js.read_text())[0]
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"{dtype} {label(var)}: FAILED: {tail}")
        return {"dtype": dtype, "tile": label(var), "error": tail}


def torch_figures(n: int, dtypes, repeats: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    out = {}
    for dtype in dtypes:
        td = getattr(torch, dtype)
        a = torch.randn(n, n, device="cuda", dtype=td)
        b = torch.randn(n, n, device="cuda", dtype=td)
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(repeats):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, b)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e-3)
        out[dtype] = 2.0 * n**3 / statistics.median(times) / 1e12
    return out


if __name__ == "__main__":
    raise SystemExit(main())
