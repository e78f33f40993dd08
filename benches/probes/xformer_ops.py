"""Where the transformer train step's time goes on `Autodiff(NdArray())`, per op, beside torch.

    python benches/probes/xformer_ops.py [--batch 4] [--seq 128] [--steps 3] [--top 30]
        [--threads N] [--no-torch] [--src ROOT] [--json FILE]

The step is `benches/suites/transformer_encoder.py`'s (6 pre-norm layers, d_model 512, 8 heads,
d_ff 2048, GELU, MSE, Adam, float32; the suite runs batch 32 x 128, `--batch 4` iterates on a
small machine). It prints:

- the step's wall and process-CPU milliseconds (median of `--steps` after one warm-up), burn and
  torch in this one process, each in a block of its own;
- per NdArray op (every op of the table, wrapped on the NdArray instance before `Autodiff` binds
  its ops; time *exclusive* of nested table ops), the wall and the process-CPU ms per step by op
  name (CPU: all threads', steadier than wall on a shared box) and the CPU ms by (name, input
  shapes), beside torch's profiler self-CPU time per aten op on the same step;
- with `--profile`, cProfile's top functions of one burn step.

`--compare` prints one before / after / torch table instead: `--rounds` pairs of child
processes, alternating, each running this probe (burn, then torch, in one process) on this tree,
"before" with `BURN_NDARRAY_NATIVE_GEMM=0 BURN_NDARRAY_NATIVE_ATTENTION=0` (numpy's matmul on
OpenBLAS's threads and the Python-pool attention kernel: the tree before issue 36's CPU work),
"after" as it is (`--base ROOT`: "before" is another tree, run as `--src ROOT`); medians over
the rounds, per step and per op group (GEMM, attention, layer norm, GELU, Adam, the rest; torch's
self CPU time per aten op, grouped the same way).
`--src ROOT` puts another tree's `packages/*/src` first on `sys.path` (`git archive main |
tar -x -C /tmp/base`, then `--src /tmp/base`).
Threads: `--threads N` sets `BURN_NUM_THREADS`, `OPENBLAS_NUM_THREADS` (for torch:
`torch.set_num_threads`) before anything loads. `OMP_WAIT_POLICY` is `PASSIVE` unless set (as
the `transformer_encoder` suite runs both sides).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def parse(argv=None):
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=4, help="batch size")
    ap.add_argument("--seq", type=int, default=128, help="sequence length")
    ap.add_argument("--steps", type=int, default=3, help="timed steps")
    ap.add_argument("--top", type=int, default=25, help="rows of each per-op table")
    ap.add_argument("--threads", type=int, default=None, help="threads for burn and torch (BURN_NUM_THREADS, OPENBLAS_NUM_THREADS, torch.set_num_threads)")
    ap.add_argument("--no-torch", action="store_true", help="skip torch")
    ap.add_argument("--no-ops", action="store_true", help="skip the per-op tables")
    ap.add_argument("--profile", action="store_true", help="cProfile one burn step")
    ap.add_argument("--src", type=Path, default=None, help="another tree's root for burn")
    ap.add_argument("--json", type=Path, default=None, help="write the results as JSON here")
    ap.add_argument("--compare", action="store_true", help="before / after / torch table")
    ap.add_argument("--rounds", type=int, default=2, help="--compare: child pairs")
    ap.add_argument("--base", type=Path, default=None,
                    help="--compare: 'before' is this tree's root (as --src), not the env switches")  # fmt: skip
    return ap


#: the switches that put this tree's GEMMs and attention back on the previous paths
BEFORE_ENV = {"BURN_NDARRAY_NATIVE_GEMM": "0", "BURN_NDARRAY_NATIVE_ATTENTION": "0"}
GROUPS = (
    ("gemm", ("matmul", "linear", "aten::mm", "aten::addmm", "aten::bmm")),
    ("attention", ("attention",)),
    ("layer norm", ("layer_norm",)),
    ("gelu", ("gelu",)),
    ("adam", ("adam", "Optimizer.step", "addcdiv", "addcmul", "lerp", "aten::sqrt")),
)


def group_of(op: str) -> str:
    if op.startswith("linear_bias"):
        return "rest"
    for name, keys in GROUPS:
        if any(k in op for k in keys):
            return name
    return "rest"


def grouped(per_op: dict) -> dict:
    out = dict.fromkeys([g for g, _ in GROUPS] + ["rest"], 0.0)
    for op, ms in per_op.items():
        out[group_of(op)] += ms
    return out


def compare(args) -> int:
    import subprocess
    import tempfile

    base = [sys.executable, str(Path(__file__).resolve()), "--batch", str(args.batch), "--seq",
            str(args.seq), "--steps", str(args.steps), "--top", "0"]  # fmt: skip
    if args.threads:
        base += ["--threads", str(args.threads)]
    runs = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for side in ("before", "after"):
                out = Path(tmp) / f"{side}{r}.json"
                before_env = BEFORE_ENV if side == "before" and args.base is None else {}
                env = dict(os.environ, **before_env)
                if not before_env:
                    for k in BEFORE_ENV:
                        env.pop(k, None)
                cmd = base + ["--json", str(out)] + (["--no-torch"] if args.no_torch else [])
                if side == "before" and args.base is not None:
                    cmd += ["--src", str(args.base)]
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
                runs[side].append(json.loads(out.read_text()))
                print(f"round {r + 1} {side}: burn {runs[side][-1]['burn']['wall_ms']:.1f} ms",
                      flush=True)  # fmt: skip
    med = statistics.median
    cols = [("before", runs["before"], "burn"), ("after", runs["after"], "burn")]
    if "torch" in runs["after"][0]:
        cols.append(("torch", runs["before"] + runs["after"], "torch"))
    first = runs["after"][0]
    print(f"\ntransformer step, batch {args.batch} x {args.seq}, d_model 512, 6 layers, "
          f"{first['threads']} threads, {args.rounds} processes per side (medians), "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'PASSIVE')}")  # fmt: skip
    print(f"{'':24s}" + "".join(f"{c:>12s}" for c, _, _ in cols))
    for key, label in (("wall_ms", "step wall ms"), ("min_wall_ms", "step min wall ms"),
                       ("cpu_ms", "step CPU ms (all threads)")):  # fmt: skip
        print(f"{label:24s}" + "".join(f"{med([r[lib][key] for r in rs]):12.1f}"
                                      for _, rs, lib in cols))  # fmt: skip
    if "burn_ops" in first:
        groups = [g for g, _ in GROUPS] + ["rest"]
        for title, suffix in (("exclusive wall", ""), ("exclusive process CPU", "_cpu")):
            if f"burn_ops{suffix}" not in first:
                continue
            # torch's profiler times ops in wall time; beside burn's CPU times its groups are
            # scaled by the step's CPU / the profiler's total (a loaded box inflates wall time)
            tnote = "profiler self time" + (" x step CPU / profiler total" if suffix else "")
            print(f"per op group, ms per step (burn: {title}; torch: {tnote})")
            per = {c: [_groups(r, lib, suffix) for r in rs if f"{lib}_ops" in r]
                   for c, rs, lib in cols}  # fmt: skip
            for g in groups:
                print(f"  {g:22s}" + "".join(f"{med([x[g] for x in per[c]]):12.1f}" if per[c]
                                             else f"{'-':>12s}" for c, _, _ in cols))  # fmt: skip
    b, a = (med([r["burn"]["wall_ms"] for r in runs[s]]) for s in ("before", "after"))
    line = f"after / before {a / b:.2f}x"
    if len(cols) == 3:
        t = med([r["torch"]["wall_ms"] for r in runs["before"] + runs["after"]])
        line += f"; before / torch {b / t:.2f}x; after / torch {a / t:.2f}x"
    print(line)
    return 0


def _groups(result: dict, lib: str, suffix: str) -> dict:
    """One child's per-group ms: burn's wall ("") or CPU ("_cpu") times; torch's profiler
    times, scaled to its step's CPU time for the CPU table."""
    if lib == "burn":
        return grouped(result[f"burn_ops{suffix}"])
    g = grouped(result["torch_ops"])
    if suffix:
        total = sum(result["torch_ops"].values()) or 1.0
        g = {k: v * result["torch"]["cpu_ms"] / total for k, v in g.items()}
    return g


def _setup_env(args) -> None:
    if args.threads:
        for k in ("BURN_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[k] = str(args.threads)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as the suite runs (Suite.env)
    if args.src is not None:
        srcs = sorted(str(p) for p in (args.src / "packages").glob("*/src"))
        sys.path[:0] = srcs
    sys.path.insert(0, str(ROOT))


class OpTimer:
    """Wraps every op of a backend instance's table; exclusive wall and process-CPU time per
    (name, shapes) (CPU: every thread's, so a loaded box's waits do not count)."""

    def __init__(self, backend):
        from burn_tensor import op_table

        self.by_key = collections.defaultdict(float)
        self.cpu_by_key = collections.defaultdict(float)
        self.calls = collections.Counter()
        self.on = False
        self._stack = []  # child time of each open frame
        for name in op_table():
            fn = getattr(backend, name, None)
            if callable(fn):
                object.__setattr__(backend, name, self._wrap(name, fn))

    def _wrap(self, name, fn):
        def timed(*args, **kw):
            if not self.on:
                return fn(*args, **kw)
            self._stack.append([0.0, 0.0])
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kw)
            finally:
                dt, dc = time.perf_counter() - t, time.process_time() - c
                child = self._stack.pop()
                shapes = tuple(tuple(a.shape) for a in args if hasattr(a, "shape"))
                self.by_key[(name, shapes)] += dt - child[0]
                self.cpu_by_key[(name, shapes)] += dc - child[1]
                self.calls[(name, shapes)] += 1
                if self._stack:
                    self._stack[-1][0] += dt
                    self._stack[-1][1] += dc

        return timed


def burn_step(batch, seq):
    from benches.suites.transformer_encoder import D_FF, D_MODEL, HEADS, LAYERS, _burn_step
    from benches.suites._common import rand
    from burn_autodiff import Autodiff
    from burn_ndarray import NdArray

    nd = NdArray()
    timer = OpTimer(nd)
    dev = Autodiff(nd).device()
    x, y = rand((batch, seq, D_MODEL), 0), rand((batch, seq, D_MODEL), 1)
    step, _ = _burn_step(dev, x, y, (D_MODEL, HEADS, D_FF, LAYERS))

    def run():
        loss = step()
        loss.into_scalar()

    return run, timer, nd


def torch_step(torch, batch, seq):
    from benches.suites.transformer_encoder import D_FF, D_MODEL, HEADS, LAYERS, _torch_step
    from benches.suites._common import rand

    x, y = rand((batch, seq, D_MODEL), 0), rand((batch, seq, D_MODEL), 1)
    step, _ = _torch_step(torch, x, y, (D_MODEL, HEADS, D_FF, LAYERS), "cpu")
    return lambda: step().item()


def time_steps(run, steps):
    run()  # warm-up (native builds, caches)
    wall, cpu = [], []
    for _ in range(steps):
        t, c = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return {"wall_ms": 1e3 * statistics.median(wall), "cpu_ms": 1e3 * statistics.median(cpu),
            "min_wall_ms": 1e3 * min(wall)}  # fmt: skip


def burn_ops(run, timer, steps):
    # one untimed step first: after torch's steps the heap has to grow back (page faults that
    # belong to neither library's step)
    run()
    timer.by_key.clear()
    timer.cpu_by_key.clear()
    timer.calls.clear()
    timer.on = True
    try:
        for _ in range(steps):
            run()
    finally:
        timer.on = False
    by_name, cpu_by_name = collections.defaultdict(float), collections.defaultdict(float)
    for (name, _), t in timer.by_key.items():
        by_name[name] += t
    for (name, _), t in timer.cpu_by_key.items():
        cpu_by_name[name] += t
    per = {k: 1e3 * v / steps for k, v in by_name.items()}
    cpu = {k: 1e3 * v / steps for k, v in cpu_by_name.items()}
    keys = {f"{n} {list(map(list, s))}": (1e3 * t / steps, timer.calls[(n, s)] // steps)
            for (n, s), t in timer.cpu_by_key.items()}  # fmt: skip
    return per, cpu, keys


def torch_ops(torch, run, steps):
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(steps):
            run()
    by_name = {e.key: e.self_cpu_time_total / 1e3 / steps for e in prof.key_averages()}
    keys = {f"{e.key} {e.input_shapes}": (e.self_cpu_time_total / 1e3 / steps, e.count // steps)
            for e in prof.key_averages(group_by_input_shape=True)}  # fmt: skip
    return by_name, keys


def _table(title, d, top):
    print(f"\n{title}")
    items = sorted(d.items(), key=lambda kv: -(kv[1][0] if isinstance(kv[1], tuple) else kv[1]))
    total = sum((v[0] if isinstance(v, tuple) else v) for v in d.values())
    print(f"  total {total:9.2f} ms")
    for k, v in items[:top]:
        if isinstance(v, tuple):
            print(f"  {v[0]:9.2f} ms  x{v[1]:<4d} {k}")
        else:
            print(f"  {v:9.2f} ms  {k}")


def main(argv=None) -> int:
    args = parse(argv)
    if args.compare:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        return compare(args)
    _setup_env(args)
    import burn_ndarray

    print(f"burn_ndarray from {Path(burn_ndarray.__file__).parent}")
    from burn_ndarray import _native

    print(f"native: {_native.status()}")
    run, timer, nd = burn_step(args.batch, args.seq)
    print(f"NdArray threads {nd.num_threads}, batch {args.batch} x {args.seq}")
    out = {"batch": args.batch, "seq": args.seq, "threads": nd.num_threads}
    out["burn"] = time_steps(run, args.steps)
    print("burn  step: wall {wall_ms:8.1f} ms (min {min_wall_ms:8.1f}), cpu {cpu_ms:8.1f} ms"
          .format(**out["burn"]))  # fmt: skip
    torch = None
    if not args.no_torch:
        try:
            import torch
        except ImportError:
            print("torch not importable: burn only")
    if torch is not None:
        torch.set_num_threads(nd.num_threads)
        trun = torch_step(torch, args.batch, args.seq)
        time.sleep(0.05)
        out["torch"] = time_steps(trun, args.steps)
        print("torch step: wall {wall_ms:8.1f} ms (min {min_wall_ms:8.1f}), cpu {cpu_ms:8.1f} ms"
              .format(**out["torch"]))  # fmt: skip
        print(f"burn/torch wall {out['burn']['wall_ms'] / out['torch']['wall_ms']:.2f}x")
    if not args.no_ops:
        per, cpu, keys = burn_ops(run, timer, args.steps)
        out["burn_ops"], out["burn_ops_cpu"], out["burn_keys"] = per, cpu, keys
        _table("burn: exclusive wall ms per step, by op", per, args.top)
        _table("burn: exclusive process-CPU ms per step, by op", cpu, args.top)
        _table("burn: by op and input shapes (CPU ms, calls per step)", keys, args.top)
        if torch is not None:
            tper, tkeys = torch_ops(torch, trun, args.steps)
            out["torch_ops"], out["torch_keys"] = tper, tkeys
            _table("torch: self CPU ms per step, by op", tper, args.top)
            _table("torch: by op and input shapes", tkeys, args.top)
    if args.profile:
        import cProfile
        import pstats

        pr = cProfile.Profile()
        pr.enable()
        run()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(args.top)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
