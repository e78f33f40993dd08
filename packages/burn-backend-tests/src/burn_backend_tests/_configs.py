"""The suite's dtype configurations, and the `burn_backend` fixture that runs a module over them.

Running the suite over several dtype configurations is its dtype matrix (the package docstring);
every backend package names them the same way, so they are written once here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

#: configuration name -> a backend's dtype options. "f32-i32" and "f64-i64" are the default
#: matrix (`DEFAULT_CONFIGS`); the half ones run where a backend opts in (they are slow on CPU).
DTYPE_CONFIGS = {
    "f32-i32": {},
    "f64-i64": {"float_dtype": "float64", "int_dtype": "int64"},
    "f16-i32": {"float_dtype": "float16"},
    "bf16-i32": {"float_dtype": "bfloat16"},
}
DEFAULT_CONFIGS = ("f32-i32", "f64-i64")


def dtype_configs(*names: str) -> dict:
    """`{name: options}` of the named configurations (default: `DEFAULT_CONFIGS`), a new dict."""
    return {name: dict(DTYPE_CONFIGS[name]) for name in names or DEFAULT_CONFIGS}


def backend_fixture(
    make: Callable[..., object], configs: dict | None = None, scope: str = "module"
):
    """A `burn_backend` fixture building `make(**options)` once per configuration of `configs`
    (default: `dtype_configs()`); assign it in a test module or conftest:

        burn_backend = backend_fixture(MyBackend)
    """
    configs = dtype_configs() if configs is None else configs

    def burn_backend(request):
        """The backend under test, once per dtype configuration."""
        return make(**configs[request.param])

    fixture = pytest.fixture(scope=scope, params=list(configs), ids=list(configs))
    return fixture(burn_backend)
