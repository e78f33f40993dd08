"""The generated source's style: calls of the runtime helpers (`ops.f(...)`) and of burn's
functional API (`F.max_pool2d(...)`) with keyword arguments, defaults left out, and no line
over 100 characters.

Both run on the generator's own lines, after they were written and before the source is
verified (`_verify.py` checks the result, so a rewrite here cannot smuggle anything in).
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import tokenize

WIDTH = 100
BINARY = ("+", "-", "*", "/", "//", "@", "&", "|", "%", "**")
OPERAND = (tokenize.NAME, tokenize.NUMBER, tokenize.STRING)
POSITIONAL = 1  # leading arguments kept positional: the tensor an `ops` helper works on


# The module objects whose calls get keywords: the runtime helpers and burn's functional API.
_MODULES = {"ops": "burn_import.onnx.ops", "F": "burn_tensor.module"}
_NO_DEFAULT = object()


@functools.lru_cache(maxsize=None)
def _params(module: str, name: str) -> tuple[tuple[str, object], ...] | None:
    """(name, default) of `<module>.<name>`'s positional-or-keyword parameters (None: leave
    its calls as written)."""
    import importlib

    fn = getattr(importlib.import_module(_MODULES[module]), name, None)
    if fn is None:
        return None
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = []
    for p in sig.parameters.values():
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            break
        params.append((p.name, _NO_DEFAULT if p.default is p.empty else p.default))
    return tuple(params)


def _is_default(value: ast.expr, default, per_dim: bool = False) -> bool:
    """Whether the argument is a literal equal to the parameter's default (bools and ints
    told apart: `False` is not the default `0`); with `per_dim` (burn's functional API, whose
    int arguments stand for every spatial dim) `[1, 1]` equals the default `1`."""
    if default is _NO_DEFAULT:
        return False
    if isinstance(default, tuple):
        default = list(default)
    try:
        v = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    if per_dim and type(default) is int and isinstance(v, list) and v:
        return all(type(x) is int and x == default for x in v)
    return type(v) is type(default) and v == default


class _Keywords(ast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        f = node.func
        if not (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in _MODULES
        ):
            return node
        if len(node.args) <= POSITIONAL + 1 or any(isinstance(a, ast.Starred) for a in node.args):
            return node
        params = _params(f.value.id, f.attr)
        if params is None or len(params) < len(node.args):
            return node
        keep, named = node.args[:POSITIONAL], node.args[POSITIONAL:]
        given = {k.arg for k in node.keywords}
        node.keywords = [
            ast.keyword(arg=params[POSITIONAL + i][0], value=v)
            for i, v in enumerate(named)
            # `steps=None` is said by leaving it out
            if not _is_default(v, params[POSITIONAL + i][1], per_dim=f.value.id == "F")
            and params[POSITIONAL + i][0] not in given
        ] + node.keywords
        node.args = keep
        self.changed = True
        return node


def with_keywords(line: str) -> str:
    """`line` (one simple statement) with `ops.f(a, b, c)` written `ops.f(a, b=b, c=c)` (and
    `F.f(...)` alike); arguments equal to the parameter's default are left out."""
    stripped = line.strip()
    if not stripped or stripped.startswith("#") or ("ops." not in stripped and "F." not in stripped):
        return line
    try:
        tree = ast.parse(stripped)
    except SyntaxError:
        return line  # a compound statement's head (`for ...:`): written as it is
    if len(tree.body) != 1 or not isinstance(tree.body[0], (ast.Assign, ast.Expr, ast.AugAssign)):
        return line
    t = _Keywords()
    tree = t.visit(tree)
    if not t.changed:
        return line
    return line[: len(line) - len(line.lstrip())] + ast.unparse(tree)


@functools.lru_cache(maxsize=None)
def _config_defaults(name: str) -> dict | None:
    """{field: default} of the burn_nn config class `name` (None: not one)."""
    import dataclasses

    import burn_nn

    cls = getattr(burn_nn, name, None)
    if not name.endswith("Config") or cls is None or not dataclasses.is_dataclass(cls):
        return None
    out = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            try:
                out[f.name] = f.default_factory()
            except TypeError:
                continue
    return out


class _ConfigDefaults(ast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Name):
            return node
        defaults = _config_defaults(node.func.id)
        if not defaults:
            return node
        kept = [
            k for k in node.keywords
            if k.arg is None or k.arg not in defaults or not _is_default(k.value, defaults[k.arg])
        ]  # fmt: skip
        if len(kept) != len(node.keywords):
            node.keywords, self.changed = kept, True
        return node


def without_config_defaults(expr: str) -> str:
    """A field's init expression with the keywords of burn_nn configs that equal the config's
    own defaults left out: `Conv2dConfig([3, 64], [3, 3], stride=[1, 1], groups=1, ...)` reads
    `Conv2dConfig([3, 64], [3, 3], ...)`, as a person writes it."""
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return expr
    t = _ConfigDefaults()
    tree = t.visit(tree)
    return ast.unparse(tree) if t.changed else expr


def _tokens(text: str):
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None


def _top_commas(text: str) -> list[int] | None:
    """Offsets of the commas at bracket depth 0 of `text` (None if it does not tokenize)."""
    toks = _tokens(text)
    if toks is None:
        return None
    depth, out = 0, []
    for t in toks:
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
        elif t.type == tokenize.OP and t.string == "," and depth == 0:
            out.append(t.start[1])
    return out


def _widest_bracket(code: str) -> tuple[int, int] | None:
    """(open, close) offsets of the widest outermost bracket pair of `code` (the call whose
    arguments make the line long: `Conv2dConfig(...)` in `Conv2dConfig(...).init(device)`)."""
    toks = _tokens(code)
    if toks is None:
        return None
    stack, best = [], None
    for t in toks:
        if t.type == tokenize.OP and t.string in "([{":
            stack.append(t.start[1])
        elif t.type == tokenize.OP and t.string in ")]}" and stack:
            o = stack.pop()
            if not stack and (best is None or t.start[1] - o > best[1] - best[0]):
                best = (o, t.start[1])
    if best is None or stack:
        return None
    return best


def _dump(text: str) -> str | None:
    """The AST of a statement (a compound statement's head gets a `pass` body), or None."""
    body = "\n    pass" if text.rstrip().endswith(":") else ""
    try:
        return ast.dump(ast.parse(text + body))
    except SyntaxError:
        return None


def wrap(line: str, width: int = WIDTH) -> list[str]:
    """`line` split to fit `width` (see `_wrap`), kept only when the split lines parse to the
    same AST as the line: a split can never change what the code does."""
    if len(line) <= width:
        return [line]
    out = _wrap(line, width)
    if len(out) == 1:
        return out
    indent = len(line) - len(line.lstrip())
    before = _dump(line.strip())
    after = _dump("\n".join(piece[indent:] for piece in out))
    return out if before is not None and before == after else [line]


def _wrap(line: str, width: int = WIDTH) -> list[str]:
    """`line` split so no piece is longer than `width` where Python allows it: the arguments
    of its last call on their own line(s), one per line when they still do not fit; a long
    expression without a call parenthesized and split at its operators; a trailing comment
    moved above. A line that cannot be split is returned as it is."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    code, comment = line.strip(), ""
    toks = _tokens(code)
    if toks is None:
        return [line]
    for t in toks:
        if t.type == tokenize.COMMENT:
            code, comment = code[: t.start[1]].rstrip(), t.string
            break
    if comment:
        return [indent + comment] + _wrap(indent + code, width)
    if code.startswith("#"):
        return [line]
    eq = code.find(" = ")
    if eq > 0 and "(" not in code[:eq]:
        target, expr = code[:eq], code[eq + 3 :]
        pieces = _split_operators(expr)
        if pieces and len(pieces) > 1:
            inner_indent = indent + "    "
            body = [w for p in pieces for w in _wrap(inner_indent + p, width)]
            return [f"{indent}{target} = ("] + body + [indent + ")"]
    pair = _widest_bracket(code)
    if pair is not None and eq > 0 and "(" not in code[:eq] and len(indent) + pair[0] >= width:
        # `target = self.long_field.forward(`: even the call's head does not fit; the whole
        # expression goes in parentheses under the target
        inner_indent = indent + "    "
        body = _wrap(inner_indent + code[eq + 3 :], width)
        return [f"{indent}{code[:eq]} = ("] + body + [indent + ")"]
    if pair is not None and pair[1] - pair[0] > 1:
        o, c = pair
        head, inner, tail = code[: o + 1], code[o + 1 : c].strip(), code[c:]
        inner_indent = indent + "    "
        if len(inner_indent) + len(inner) <= width:
            body = [inner_indent + inner]
        else:
            commas = _top_commas(inner) or []
            cuts = [0] + [i + 1 for i in commas] + [len(inner)]
            parts = [inner[a:b].strip().rstrip(",").strip() for a, b in zip(cuts, cuts[1:])]
            parts = [p for p in parts if p]
            if len(parts) == 1:
                # one item: no trailing comma, which would make `(cond)` a tuple, always true;
                # inside the brackets it may break at its operators
                pieces = _split_operators(parts[0], words=True)
                if len(inner_indent) + len(parts[0]) > width and pieces and len(pieces) > 1:
                    body = [w for p in pieces for w in _wrap(inner_indent + p, width)]
                else:
                    body = _wrap(inner_indent + parts[0], width)
            else:
                body = [w for p in parts for w in _wrap(inner_indent + p + ",", width)]
        return [indent + head] + body + [indent + tail]
    return [line]


def _split_operators(expr: str, words: bool = False) -> list[str] | None:
    """`expr` cut before each top-level binary operator (`a + b * c` -> [`a`, `+ b * c`]);
    with `words`, before `and` / `or` too."""
    toks = _tokens(expr)
    if toks is None:
        return None
    depth, cuts, prev = 0, [], None
    for t in toks:
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
        elif depth == 0 and (
            (t.type == tokenize.OP and t.string in BINARY)
            or (words and t.type == tokenize.NAME and t.string in ("and", "or"))
        ):
            # binary only after an operand (`a * -b` keeps `-b` whole)
            if prev is not None and (prev.type in OPERAND or prev.string in ")]}"):
                cuts.append(t.start[1])
        if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER):
            prev = t
    if not cuts:
        return None
    bounds = [0] + cuts + [len(expr)]
    return [expr[a:b].strip() for a, b in zip(bounds, bounds[1:])]
