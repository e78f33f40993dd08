"""All-reduce bandwidth of burn's collective layer beside NCCL's own call, on GPUs.

    python -m burn_train.launch --nproc-per-node N benches/collective/allreduce.py [--mib 256]

Each rank joins with `init_process_group("nccl")` and all-reduces a float32 cupy array of
`--mib` MiB: through `NcclGroup.all_reduce_array` (the layer) and through
`cupy.cuda.nccl.NcclCommunicator.allReduce` on the same communicator (NCCL directly), best of
`--repeats` after warm-up. Rank 0 prints the bus bandwidth of both (2(n-1)/n x bytes / time,
NCCL's own figure of merit) and their ratio, as JSON.
"""

from __future__ import annotations

import argparse
import json
import time


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="all-reduce bandwidth: burn layer vs NCCL")
    parser.add_argument("--mib", type=int, default=256, help="message size in MiB")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per side")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    import cupy as cp

    from burn_tensor.collective import init_process_group

    comm = init_process_group("nccl")
    n = comm.world_size
    x = cp.ones(args.mib * (1 << 20) // 4, cp.float32)
    out = cp.empty_like(x)
    stream = cp.cuda.get_current_stream()
    nccl = comm._nccl

    def layer():
        comm.all_reduce_array(x, "sum")

    def direct():
        comm._comm.allReduce(x.data.ptr, out.data.ptr, x.size, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                             stream.ptr)  # fmt: skip

    result = {"world_size": n, "mib": args.mib}
    for name, fn in (("direct", direct), ("layer", layer), ("direct_again", direct)):
        for _ in range(3):
            fn()
        stream.synchronize()
        comm.barrier()
        best = float("inf")
        for _ in range(args.repeats):
            t = time.perf_counter()
            fn()
            stream.synchronize()
            best = min(best, time.perf_counter() - t)
        bus = 2 * (n - 1) / n * x.nbytes / best / 1e9 if n > 1 else x.nbytes / best / 1e9
        result[name] = {"ms": round(best * 1e3, 3), "bus_GBps": round(bus, 1)}
    nccl_best = max(result["direct"]["bus_GBps"], result["direct_again"]["bus_GBps"])
    result["layer_vs_nccl"] = round(result["layer"]["bus_GBps"] / nccl_best, 3)
    if comm.rank == 0:
        print(json.dumps(result), flush=True)
    comm.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
