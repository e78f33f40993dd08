"""Printing: Burn's Display for `print(t)`, one short line for `repr(t)`."""

from burn_tensor import Tensor


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
