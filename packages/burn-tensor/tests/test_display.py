"""Printing: Burn's Display for `print(t)`, one short line for `repr(t)`."""

import numpy as np
import pytest

from burn_tensor import PrintOptions, Tensor, set_print_options


def test_display_float_matches_burn(device):
    t = Tensor.from_data([[1.1, 2.2, 3.3], [4.4, 5.5, 6.6], [7.7, 8.8, 9.9]], device)
    assert str(t) == (
        "Tensor {\n"
        "  data:\n"
        "[[1.1, 2.2, 3.3],\n"
        " [4.4, 5.5, 6.6],\n"
        " [7.7, 8.8, 9.9]],\n"
        "  shape:  [3, 3],\n"
        "  device:  Cpu,\n"
        '  backend:  "ndarray",\n'
        '  kind:  "Float",\n'
        '  dtype:  "f32",\n'
        "}"
    )


def test_display_int_and_bool(device, device64):
    t = Tensor.from_data([[1, 2, 3], [4, 5, 6]], device64)
    s = str(t)
    assert "[[1, 2, 3],\n [4, 5, 6]]" in s
    assert '  kind:  "Int",\n' in s and '  dtype:  "i64",\n' in s
    b = Tensor.from_data([[True, False, True], [False, True, False]], device)
    s = str(b)
    assert "[[true, false, true],\n [false, true, false]]" in s
    assert '  kind:  "Bool",\n' in s and '  dtype:  "bool",\n' in s
    assert '  dtype:  "f64",\n' in str(Tensor.ones([1], device64))


def test_display_summarizes_large_tensors(device):
    s = str(Tensor.arange(0, 5000, device))
    assert "..." in s and "4999" in s and "  shape:  [5000]," in s


def test_repr_is_one_line(device):
    t = Tensor.zeros([2, 3], device)
    assert repr(t) == "Tensor(shape=[2, 3], kind=Float, dtype=float32, device=Cpu)"
    assert "\n" not in repr(Tensor.from_data([True], device))


def test_format(device):
    t = Tensor.from_data([2.5], device)
    assert f"{t:.2f}" == "2.50"
    assert f"{t}" == str(t)


def test_format_precision_on_a_tensor_is_burns_display_with_n_decimals(device):
    # Burn: println!("{:.2}", tensor) prints the whole tensor with 2 decimals.
    t = Tensor.from_data([[1.0, 2.0], [3.0, 4.126]], device)
    shown = f"{t:.2}"
    assert shown.startswith("Tensor {\n  data:\n[[1.00, 2.00],\n [3.00, 4.13]],\n  shape:  [2, 2],")
    assert shown.split("shape:")[1] == str(t).split("shape:")[1]
    assert f"{Tensor.from_data([2.5], device):.2}" == "2.5"  # one element: the scalar, as before


def test_tensor_data_str_is_burns_display(device):
    # Burn: println!("{}", tensor.to_data()) prints the flat values, as Rust's `{:?}` of a slice.
    assert str(Tensor.from_data([[1.0, -0.5], [2.5, 4.0]], device).to_data()) == (
        "[1.0, -0.5, 2.5, 4.0]"
    )
    assert str(Tensor.from_data([10, 20, 30], device).to_data()) == "[10, 20, 30]"
    assert str(Tensor.from_data([True, False], device).to_data()) == "[true, false]"
    assert f"{Tensor.from_data([float('nan')], device).to_data()}" == "[NaN]"


# -- Burn's element format: Rust `{:?}` of each element (burn-tensor api/base.rs Display) ----------
def _data_block(t) -> str:
    text = str(t)
    return text[len("Tensor {\n  data:\n") : text.index(",\n  shape:")]


def test_book_print_shows_floats_as_burn(device):
    # Both books: `[[3.0, 4.0],` where numpy would print `[[3., 4.],`.
    t = Tensor.from_data([[3.0, 4.0], [5.0, 6.0]], device)
    assert str(t) == (
        "Tensor {\n"
        "  data:\n"
        "[[3.0, 4.0],\n"
        " [5.0, 6.0]],\n"
        "  shape:  [2, 2],\n"
        "  device:  Cpu,\n"
        '  backend:  "ndarray",\n'
        '  kind:  "Float",\n'
        '  dtype:  "f32",\n'
        "}"
    )


def test_floats_print_shortest_round_trip_in_their_own_precision(device, device64):
    # f32 0.1 + 0.2 is f32's 0.3; in f64 it is 0.30000000000000004 (Rust prints both that way).
    a32 = Tensor.from_data([0.1], device) + Tensor.from_data([0.2], device)
    # (float64 numpy arrays: a list of Python floats is read as float32 data first)
    a64 = Tensor.from_data(np.array([0.1]), device64) + Tensor.from_data(np.array([0.2]), device64)
    assert _data_block(a32) == "[0.3]"
    assert _data_block(a64) == "[0.30000000000000004]"
    # 123456789 is not an f32: the nearest is 123456792, shortest f32 digits 12345679.
    assert _data_block(Tensor.from_data([123456789.0, -2.5, -0.0], device)) == (
        "[123456790.0, -2.5, -0.0]"
    )


def test_floats_switch_to_exponent_form_like_rust_debug(device, device64):
    # Rust's Debug: exponent form for 0 < |x| < 1e-4 and |x| >= 1e16, no `+`, no zero padding.
    t = Tensor.from_data(np.array([1e-5, 1.5e16, 1e-4, 0.00012, -1.234e-7, 0.0]), device64)
    assert _data_block(t) == "[1e-5, 1.5e16, 0.0001, 0.00012, -1.234e-7, 0.0]"
    # f32 1e-4 is compared in f32, so it stays decimal too.
    assert _data_block(Tensor.from_data([1e-4, 1e20], device)) == "[0.0001, 1e20]"


def test_nan_and_infinities(device):
    t = Tensor.from_data([float("nan"), float("inf"), float("-inf"), 1.0], device)
    assert _data_block(t) == "[NaN, inf, -inf, 1.0]"
    assert f"{t:.2}".split("\n")[2] == "[NaN, inf, -inf, 1.00],"


def test_ints_bools_and_3d_nesting(device):
    t = Tensor.from_data([[[1, -2], [3, 4]], [[5, 6], [7, -80]]], device)
    assert _data_block(t) == "[[[1, -2],\n  [3, 4]],\n [[5, 6],\n  [7, -80]]]"
    b = Tensor.from_data([[True], [False]], device)
    assert _data_block(b) == "[[true],\n [false]]"


def test_half_precision_prints_its_f32_value(device):
    # `half`'s Debug prints the f32 conversion: f16(0.1) is 0.0999755859375.
    t = Tensor.from_data([0.1, 2.0], device, dtype="float16")
    assert _data_block(t) == "[0.099975586, 2.0]"
    assert '  dtype:  "f16",\n' in str(t)


def test_summarises_past_1000_elements_as_burn(device):
    assert _data_block(Tensor.arange(0, 1000, device)).count("...") == 0
    assert _data_block(Tensor.arange(0, 1001, device)) == "[0, 1, 2, ..., 998, 999, 1000]"
    t = Tensor.arange(0, 1400, device).reshape([7, 200])
    # Burn: rows end with `,` except the `...` line; the innermost dim is cut the same way.
    assert _data_block(t) == (
        "[[0, 1, 2, ..., 197, 198, 199],\n"
        " [200, 201, 202, ..., 397, 398, 399],\n"
        " [400, 401, 402, ..., 597, 598, 599],\n"
        " ...\n"
        " [800, 801, 802, ..., 997, 998, 999],\n"
        " [1000, 1001, 1002, ..., 1197, 1198, 1199],\n"
        " [1200, 1201, 1202, ..., 1397, 1398, 1399]]"
    )
    # A dim of at most 2 * edge_items is never cut, even in a summarised tensor.
    assert _data_block(Tensor.zeros([6, 200], device, dtype="int32")).count("...") == 6


def test_long_rows_are_not_wrapped_or_padded(device):
    # numpy wraps at 75 columns and pads to a common width; Burn does neither.
    t = Tensor.from_data([[1.5, -10.0, 100.25] * 10, [0.0] * 30], device)
    rows = _data_block(t).split("\n")
    assert len(rows) == 2
    assert rows[0] == "[[" + ", ".join(["1.5", "-10.0", "100.25"] * 10) + "],"
    assert rows[1] == " [" + ", ".join(["0.0"] * 30) + "]]"


def test_empty_tensors(device):
    assert _data_block(Tensor.zeros([0], device)) == "[]"
    assert _data_block(Tensor.zeros([2, 0], device)) == "[[],\n []]"


def test_print_options_set_precision_threshold_and_edge_items(device):
    t = Tensor.from_data([[1.0, 2.0], [3.0, 4.126]], device)
    try:
        set_print_options(PrintOptions(precision=2))
        assert _data_block(t) == "[[1.00, 2.00],\n [3.00, 4.13]]"
        assert _data_block(Tensor.from_data([7, 8], device)) == "[7, 8]"  # ints take no decimals
        set_print_options(PrintOptions(threshold=4, edge_items=1))
        assert _data_block(Tensor.arange(0, 5, device)) == "[0, ..., 4]"
    finally:
        set_print_options(PrintOptions())
    assert _data_block(t) == "[[1.0, 2.0],\n [3.0, 4.126]]"
    with pytest.raises(TypeError, match="expected PrintOptions"):
        set_print_options({"precision": 2})


def test_tensor_data_str_uses_the_same_element_format(device):
    d = Tensor.from_data([1e-5, 3.0, float("-inf")], device).to_data()
    assert str(d) == "[1e-5, 3.0, -inf]"
