"""How `@config` resolves field annotations when decoding JSON: forward references that resolve are
typed (nested configs, enums and lists come back as such), and an annotation that cannot be
resolved is an error naming the class, the field and the annotation, not a silent `Any` that would
also untype every other field of the class."""

import enum

import pytest
from burn_nn import ConfigError, config


class Mode(enum.Enum):
    Fast = 1
    Exact = 2


@config
class Leaf:
    size: int
    mode: Mode = Mode.Fast


@config
class Tree:
    # string annotations, one to a class defined further down: resolved when first decoded
    left: "Leaf"
    right: "Later"
    leaves: "list[Leaf]" = []


@config
class Later:
    mode: "Mode"
    depth: int = 1


@config
class Broken:
    leaf: Leaf
    mode: Mode = Mode.Fast
    other: "NoSuchType | None" = None  # noqa: F821 -- the unresolvable annotation under test


@config
class BrokenChild(Leaf):
    extra: "list[Missing]" = []  # noqa: F821


def test_forward_references_decode_typed():
    tree = Tree(Leaf(2, mode=Mode.Exact), Later(Mode.Exact, depth=3), leaves=[Leaf(1), Leaf(5)])
    back = Tree.from_json(tree.to_json())
    assert back == tree
    assert type(back.left) is Leaf and back.left.mode is Mode.Exact
    assert type(back.right) is Later and back.right.mode is Mode.Exact
    assert [type(x) for x in back.leaves] == [Leaf, Leaf]


def test_unresolvable_annotation_names_class_field_and_annotation():
    text = Broken(Leaf(3), mode=Mode.Exact).to_json()  # encoding needs no types
    with pytest.raises(ConfigError) as err:
        Broken.from_json(text)
    msg = str(err.value)
    assert "Broken.other" in msg and "'NoSuchType | None'" in msg and "NoSuchType" in msg
    # the same error every time (nothing half-resolved is cached), and other classes still decode
    with pytest.raises(ConfigError, match=r"Broken\.other"):
        Broken.from_dict({"leaf": {"size": 3}})
    assert type(Tree.from_json(Tree(Leaf(1), Later(Mode.Fast)).to_json()).left) is Leaf


def test_unresolvable_annotation_in_subclass_names_the_subclass_field():
    with pytest.raises(ConfigError, match=r"BrokenChild\.extra.*'list\[Missing\]'"):
        BrokenChild.from_dict({"size": 1})


def test_locally_defined_configs_resolve_eagerly_evaluated_annotations():
    # without `from __future__ import annotations` these are class objects, not strings
    @config
    class LocalInner:
        n: int

    @config
    class LocalOuter:
        inner: LocalInner
        items: list[LocalInner] = []

    back = LocalOuter.from_json(LocalOuter(LocalInner(4), items=[LocalInner(5)]).to_json())
    assert type(back.inner) is LocalInner and back.items == [LocalInner(5)]
