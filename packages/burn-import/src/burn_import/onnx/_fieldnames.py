"""Field names of the generated Module, as a person would have written them: after the source
model's module paths when the file keeps them, a numbered kind (`conv2d3`) otherwise.

Two places keep the paths. Exporters that keep the state-dict names (torch's dynamo exporter,
and the legacy one for weights it did not fold) name initializers `layer4.0.conv2.weight`; the
legacy exporter names nodes by module scope, `/layer4/layer4.0/conv2/Conv`, where a child's
segment repeats its parent's prefix. Either gives `layer4_0_conv2`.
"""

from __future__ import annotations

import re

import onnx

# A state-dict key: dotted words, no `::` (torch's `onnx::Conv_61` temporaries) and no `/`.
_KEY = re.compile(r"^[A-Za-z_][\w]*(?:\.\w+)+$")
# Generic node names exporters give (`node_Conv_0`, `Conv_12`): no module path in them.
_GENERIC = re.compile(r"^(?:node_)?[A-Z][A-Za-z]*(?:_\d+)?$")


def param_key(name: str) -> str | None:
    """`name` when it is a state-dict key (`enc.layers.0.norm1.weight`), else None."""
    return name if _KEY.match(name) else None


def _scope_parts(node_name: str) -> list[str] | None:
    """The module path segments of a scoped node name, a child's repetition of its parent's
    name dropped: `/b/b.0/c1/Conv` -> [`b.0`, `c1`]; None for a name without scopes."""
    if not node_name.startswith("/"):
        return None
    parts: list[str] = []
    for seg in node_name.strip("/").split("/")[:-1]:
        rest = seg[len(parts[-1]) :] if parts and seg.startswith(parts[-1]) else ""
        if rest and not rest[0].isalnum():
            parts[-1] = seg  # torch repeats the parent's name: `b` then `b.0` (regnet: `b-0`)
        elif seg:
            parts.append(seg)
    return parts


def scope_path(node_name: str) -> str | None:
    """The module path in a scoped node name: `/b/b.0/c1/Conv` -> `b.0.c1`; None without one."""
    return ".".join(_scope_parts(node_name) or []) or None


def node_field_hint(node: onnx.NodeProto, initializers: set[str]) -> str | None:
    """The module path a layer field of `node` is named after (None: use the kind)."""
    for i in node.input[1:]:
        key = param_key(i) if i in initializers else None
        if key is not None and "." in key:
            return key.rsplit(".", 1)[0]
    path = scope_path(node.name)
    if path is not None:
        return path
    if node.name and not node.name.startswith("/") and not _GENERIC.match(node.name):
        return node.name
    return None


def shorter_value_name(name: str) -> str:
    """A value name without the `_output_0` / `:0` tail torch and TensorFlow add (the variable
    is the node's output anyway); uniqueness is restored by `Gen.fresh`."""
    return re.sub(r"(?:_output_0|:0)$", "", name) or name


LOCAL_MAX = 30  # characters of a local variable's name (before a `_2` suffix makes it unique)


def _snake(op: str) -> str:
    """`GlobalAveragePool_1` -> `global_average_pool_1`; `MatMul` -> `matmul`."""
    op = op.replace("MatMul", "Matmul")
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", op).lower()


def local_names(nodes, whole: set | None = None) -> dict[str, str]:
    """Short names for the outputs of legacy-exporter nodes, whose value names spell the whole
    module scope (`/features/features.1/block/block.1/avgpool/GlobalAveragePool_output_0`).

    A value is named after its node's module path (`features_1_block_1_avgpool`), with the op
    added (`layer1_0_add`) unless the node is the only one of a leaf module (a module with no
    sub-modules), whose output the path names already; leading path parts are dropped to keep
    the name within `LOCAL_MAX` characters. The full name stays in the node's comment, and
    `Gen.fresh` makes the names unique. Only values named after their node are renamed; other
    names (a graph output's `logits`, other exporters' short ones) stay. `whole` (when given)
    receives the names of the nodes whose every path part is in the name: the name says
    which node wrote it, no comment needed.
    """
    scopes: dict[tuple, int] = {}
    parsed = []
    for node in nodes:
        parts = _scope_parts(node.name)
        if parts is None:
            continue
        key = tuple(parts)
        scopes[key] = scopes.get(key, 0) + 1
        parsed.append((node, parts))
    inner = {k[:i] for k in scopes for i in range(len(k))}  # scopes with sub-modules
    out: dict[str, str] = {}
    for node, parts in parsed:
        key = tuple(parts)
        op = node.name.rstrip("/").rsplit("/", 1)[-1]
        leaf_alone = parts and key not in inner and scopes[key] == 1
        words = [p.replace(".", "_").replace("-", "_") for p in parts]
        tail = [] if leaf_alone else [_snake(op)]
        n_parts = len(words)
        while len(words) > 1 and len("_".join(words + tail)) > LOCAL_MAX:
            words = words[1:]
        if whole is not None and len(words) == n_parts and len("_".join(words + tail)) <= LOCAL_MAX:
            whole.add(node.name)
        for i, value in enumerate(node.output):
            if value == f"{node.name}_output_{i}":  # named after the node: a graph output's
                # own name (`logits`) stays
                out[value] = "_".join(words + tail + ([f"out{i}"] if i else []))
    return out


FIELD_MAX = 48  # characters of a field name (`_names.MAX_IDENTIFIER` would cut the rest off)


def field_path(path: str) -> str:
    """A module path as a field name, `layer4.0.conv2` -> `layer4_0_conv2`. A path too long
    for `FIELD_MAX` first loses leading segments that later ones repeat
    (`encoder.layers.encoder_layer_0.mlp` -> `layers_encoder_layer_0_mlp`): cutting the end
    would leave `..._self_attention_in` of `..._self_attention_in_proj_bias`."""
    segs = path.replace("-", "_").split(".")
    while len("_".join(segs)) > FIELD_MAX and len(segs) > 1:
        later = set(w.rstrip("s") for s in segs[1:] for w in s.split("_"))
        if segs[0].rstrip("s") not in later:
            break
        segs = segs[1:]
    return "_".join(segs)


def scoped_value_name(name: str) -> str | None:
    """A value name in torch's scoped form that no node wrote (an initializer the exporter
    folded: `/encoder/Expand_output_0`) as a path: `encoder.expand`; None for other names."""
    m = re.fullmatch(r"(/.*/)?/?([A-Za-z]\w*?)(?:_output_\d+)?", name)
    if not name.startswith("/") or m is None:
        return None
    parts = _scope_parts(name) or []
    return ".".join(parts + [_snake(m.group(2))])
