"""Turning a pending plan into a `Program`: which ops and inputs the live results need (dead-code
elimination), how each input is read (at the item's own index, or through strides), where each
result is written (a new buffer, an input's buffer in place, or once per broadcast dim), and the
cache of compiled kernels. `Stream` (`_stream.py`) records plans; `_recipe.py` calls these when a
plan's launch recipe is built.
"""

from __future__ import annotations

from burn_gpu import REDUCE_OPS, WIDTHS, Node, Program, render, render_reduction

from burn_gpu import dtype_name as _name


def _merge(a: tuple, b: tuple) -> tuple | None:
    """The shape both broadcast to (equal rank, dims equal or 1), or None."""
    if a == b:
        return a
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def _contiguous_strides(shape) -> tuple:
    out, acc = [], 1
    for d in reversed(shape):
        out.append(acc)
        acc *= d
    return tuple(reversed(out))


class PlanMixin:
    """The planning half of `Stream` (its attributes: rt, dialect, plans, stats, vector_width)."""

    def _gather(self, nodes, inputs, owners, roots):
        """The ops `roots` need (dead-code elimination), renumbered, and their inputs' layouts
        relative to the kept ops' common shape. Returns a dict of what `_run`/`reduce` build
        the Program from."""
        need = [False] * len(nodes)
        for j in roots:
            need[j] = True
        for j in range(len(nodes) - 1, -1, -1):
            if need[j]:
                for r in nodes[j][1]:
                    if r >= 0:
                        need[r] = True
        remap, used_inputs = {}, {}
        for j, nd in enumerate(nodes):
            if need[j]:
                remap[j] = len(remap)
                for r in nd[1]:
                    if r < 0 and r not in used_inputs:
                        used_inputs[r] = len(used_inputs)
        shape = None  # the kept ops' common shape (dead ops may have widened the plan's)
        for j in remap:
            shape = nodes[j][6] if shape is None else _merge(shape, nodes[j][6])
        contiguous = _contiguous_strides(shape)
        # inputs: read at the item's own index, or through strides (views, broadcasts)
        in_desc, ins, ints_in, plain = [], [], [], []
        for r, k in sorted(used_inputs.items(), key=lambda e: e[1]):
            prim = inputs[-r - 1]
            strides, offset = self.rt.layout(prim)
            strided = not (prim.shape == shape and offset == 0 and tuple(strides) == contiguous)
            if strided:
                ints_in += [
                    0 if n < shape[d] else st for d, (n, st) in enumerate(zip(prim.shape, strides))
                ]
                ints_in.append(offset)
            else:
                owner = owners[-r - 1] if owners is not None else None
                if owner is not None and owner() is None:
                    plain.append(k)  # dropped by its owner: may be written in place
            in_desc.append((_name(prim.dtype), strided))
            ins.append(prim)
        prog_nodes, scalars = [], []
        for j, nd in enumerate(nodes):
            if need[j]:
                op, refs, dt, out, sc = nd[:5]
                refs = tuple(remap[r] if r >= 0 else -used_inputs[r] - 1 for r in refs)
                prog_nodes.append(Node(op, refs, dt, out))
                if op not in REDUCE_OPS:  # a reduction's "scalar" is its dim: geometry
                    scalars += [(v, dt) for v in sc]
        return {
            "remap": remap,
            "used": used_inputs,
            "shape": shape,
            "in_desc": in_desc,
            "ins": ins,
            "ints_in": ints_in,
            "plain": plain,
            "nodes": prog_nodes,
            "scalars": scalars,
        }

    def _vector_ok(self, ins) -> bool:
        """Whether the vector kernel may run: enabled, and every input (so every buffer written
        in place) starts 16-byte aligned; new outputs come aligned from the allocator."""
        if self.vector_width not in WIDTHS:
            return False
        aligned = self.rt.aligned
        for x in ins:  # (a loop, not `all` over a generator: once per fused launch)
            if not aligned(x):
                return False
        return True

    def kernel(self, key):
        """The compiled kernel of `key` (a Program or a Reduction), from the plan cache."""
        kernel = self.plans.get(key)
        if kernel is None:
            if isinstance(key, Program):
                src, name = render(key, self.dialect)
            else:
                src, name = render_reduction(key, self.dialect)
            kernel, how = self.rt.compile(src, name)
            self.stats["kernels_compiled" if how == "compiled" else "kernels_from_disk"] += 1
            self.plans[key] = kernel
        else:
            self.stats["plan_cache_hits"] += 1
        return kernel

    def _outputs(self, g, nodes, results, red_js):
        """(Program outputs, their layout ints): new buffers, an input's buffer (in place), or
        -- smaller, broadcast results -- written by the items at index 0 of the broadcast dims.
        Nodes `red_js` (a row kernel's reductions) are written once per row instead."""
        shape, remap, in_desc, plain = g["shape"], g["remap"], g["in_desc"], g["plain"]
        rank = len(shape)
        outputs, ints_out, taken = [], [], set()
        for j, t in results:
            k_in, bdims = -1, ()
            if j in red_js:
                pass
            elif t.shape != shape:
                bdims = tuple(d for d in range(rank) if t.shape[d] != shape[d])
                st = _contiguous_strides(t.shape)
                ints_out += [0 if d in bdims else st[d] for d in range(rank)]
            else:
                for k in plain:
                    if k not in taken and in_desc[k][0] == nodes[j][3]:
                        k_in = k
                        taken.add(k)
                        self.stats["results_in_place"] += 1
                        break
            outputs.append((remap[j], k_in, bdims))
        return outputs, ints_out
