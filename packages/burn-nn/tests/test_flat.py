"""`burn_nn.module.params_of` / `replace_params`, the optimizer's flat passes: the same
parameters in the same order as `Module.visit`, the same copy as `Module.map`, over lists,
dicts, tuples, None items, optional fields, tied parameters and constants."""

import numpy as np
from burn_nn import LinearConfig, Module, Param
from burn_nn.module import params_of, replace_params
from burn_tensor import Tensor


class Tree(Module):
    layers: list
    heads: dict
    pair: tuple
    tied: Param | None = None
    extra: Module | None = None
    stride: tuple = (1, 2)
    label: str = "tree"


def _tree(device):
    lin = [LinearConfig(3, 3).init(device) for _ in range(4)]
    shared = lin[0].weight  # the same Param in two places
    return Tree(
        layers=[lin[0], None, lin[1]],
        heads={"b": lin[2], "a": [lin[3], None]},
        pair=(
            Param.from_tensor(Tensor.ones([2], device)),
            Param.from_tensor(Tensor.ones([1], device)),
        ),
        tied=shared,
    )


def test_params_of_is_visits_order_with_repeats(device):
    tree = _tree(device)
    seen = []
    tree.visit(lambda pid, t: seen.append(pid))
    got = [p.id for p in params_of(tree)]
    assert got == seen and len(got) == 2 * 4 + 2 + 1
    assert got.count(tree.layers[0].weight.id) == 2  # tied: listed where each field holds it


def test_replace_params_copies_as_map_does(device):
    tree = _tree(device)
    new = replace_params(tree, lambda p: p.map(lambda t: t + 1))
    mapped = tree.map(type("Plus", (), {"map": lambda self, i, t: t + 1})())
    for a, b in zip(params_of(new), params_of(mapped), strict=True):
        assert a.id == b.id
        np.testing.assert_array_equal(a.val().numpy(), b.val().numpy())
    # containers are new objects of the same types, None items and constants kept
    assert type(new.layers) is list and new.layers is not tree.layers and new.layers[1] is None
    assert list(new.heads) == ["b", "a"] and new.heads["a"][1] is None
    assert type(new.pair) is tuple and new.extra is None
    assert new.stride is tree.stride and new.label == "tree"
    # the original is untouched
    np.testing.assert_array_equal(tree.pair[0].val().numpy(), np.ones(2, np.float32))


def test_a_changed_structure_is_walked_as_it_is_now(device):
    tree = _tree(device)
    n = len(params_of(tree))
    tree.extra = LinearConfig(3, 1).init(device)
    tree.layers.append(LinearConfig(3, 2).init(device))
    tree.stride = [LinearConfig(1, 1).init(device)]  # a former constant field now holds a module
    assert len(params_of(tree)) == n + 6
    assert {p.id for p in params_of(replace_params(tree, lambda p: p))} == {
        p.id for p in params_of(tree)
    }
