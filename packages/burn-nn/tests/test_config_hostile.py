"""Config files as a careless or hostile user writes them: every bad input is a ConfigError that
names the file (raw RecursionError, OverflowError, ValueError, UnicodeDecodeError and TypeError
escaped before)."""

from __future__ import annotations

import pytest

from burn_nn import ConfigError, LinearConfig

CASES = {
    "deep": (
        '{"d_input": 2, "d_output": 3, "initializer": ' + "[" * 100_000 + "]" * 100_000 + "}",
        "nested too deeply",
    ),
    "float_overflow": (
        '{"d_input": 2, "d_output": 3, "initializer": {"Constant": {"value": 1' + "0" * 400 + "}}}",
        "OverflowError",
    ),
    "digits": ('{"d_input": 1' + "0" * 5000 + ', "d_output": 3}', "invalid JSON value"),
    "utf8": (b'{"d_input": 2, "d_output": 3, "x": "\xff\xfe"}', "not UTF-8"),
    "variant_missing_field": (
        '{"d_input": 2, "d_output": 3, "initializer": {"Uniform": {"min": 0}}}',
        "missing 1 required positional argument: 'max'",
    ),
    "not_object": ("[1, 2]", "expected a JSON object"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_config_file_is_a_config_error_naming_the_file(tmp_path, name):
    text, fragment = CASES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    with pytest.raises(ConfigError) as info:
        LinearConfig.load(path)
    assert str(info.value).startswith(str(path)), str(info.value)
    assert fragment in str(info.value)


def test_a_directory_is_named(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        LinearConfig.load(tmp_path)
