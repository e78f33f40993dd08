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


def scope_path(node_name: str) -> str | None:
    """The module path in a scoped node name: `/b/b.0/c1/Conv` -> `b.0.c1`; None without one."""
    if not node_name.startswith("/"):
        return None
    parts: list[str] = []
    for seg in node_name.strip("/").split("/")[:-1]:
        if parts and seg.startswith(parts[-1] + "."):
            parts[-1] = seg  # torch repeats the parent's name: `b` then `b.0`
        elif seg:
            parts.append(seg)
    return ".".join(parts) or None


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
