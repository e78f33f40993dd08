"""burn_backend_tests: the backend conformance suite of burn-py (Burn's `burn-backend-tests`).

Every op of the Tensor API (the Burn Book's Basic, Numeric, Float, Int, Bool and Activation tables
of both editions, plus burn_tensor's extra ops) is run on the backend under test, for every kind it
applies to, with its inputs built contiguous and through view ops (permuted, flipped, strided,
expanded), over edge cases (empty dims, size-1 broadcasting, negative dims and indices, large values,
NaN/inf), and compared with numpy float64 references computed independently in the suite (never
by a backend), plus literal input/output pairs from Burn's own tests. Result kind, dtype, shape and
device are checked too, so running it over several dtype configurations is the dtype matrix.

The pytest plugin is opt-in: installing this package changes no one's pytest session. Running the
suite on a new backend takes its test dependency on `burn-backend-tests`, one line in the top-level
conftest and a one-line test module::

    # conftest.py (at the rootdir: pytest refuses `pytest_plugins` in a nested conftest)
    pytest_plugins = ["burn_backend_tests.plugin"]

    # my_backend/tests/conftest.py
    import pytest
    from my_backend import MyBackend

    @pytest.fixture(scope="session", params=["f32", "f64"])
    def burn_backend(request):          # overrides the plugin's fixture
        if request.param == "f64":
            return MyBackend(float_dtype="float64", int_dtype="int64")
        return MyBackend()

    # my_backend/tests/test_conformance.py
    from burn_backend_tests.conformance import *  # noqa: F401,F403

Without a `burn_backend` fixture of its own the plugin builds the backend registered under the
`burn.backends` entry-point name given by `--burn-backend NAME` (default `ndarray`), so a
decorator package can also run `pytest tests/test_conformance.py --burn-backend=opencl`.

Fixtures (from `burn_backend_tests.plugin`):
- `burn_backend`: the backend under test.
- `burn`: a `Ctx` for it: `burn.device`, `burn.fdt` / `burn.idt` (element dtypes), `burn.tol`
  (per-dtype tolerance), `burn.view_input(x, kind, layout)` -> (tensor, float64 reference input),
  `burn.assert_close` / `assert_equal` / `assert_result` (kind + dtype + shape + device + values).

Layout:
- `conformance`: every suite test, for `from burn_backend_tests.conformance import *`.
- `suites.<family>`: the tests of one op family (`elementwise` (+ `elementwise_scalar`, `logic`),
  `layout`, `reduce`, `creation`, `activation`, `activation_backward`, `module_pool`,
  `module_interp`, `module_embedding`, `module_dropout`, `module_conv` (+ `_act`, `_grad`, `_literals`), `module_linear`
  (+ `_half`: autocast's linear),
  `module_literals`, `burn_literals`, `checks_index`, `checks_values`, `device`, `optim`, `unfold`, `book`), table driven: adding an
  op usually means one row. A package may import one family to run a subset (burn-fusion does).
  `suites.coverage` holds the completeness case: the plugin counts every op of the table that
  suite tests reach on the backend under test, runs that case last, and prints "N of M ops of
  the table covered" per backend at the end of the session.
- `reference.conv`, `reference.pool`, `reference.interp`: float64 nested-loop references of the
  module ops (backends' own tests use them too). Module ops run through `burn_tensor.module`,
  and backward primitives (`avg_pool2d_backward`, `interpolate_backward`, `relu_backward`, ...)
  are called on the backend directly, as Autodiff calls them, against these references and
  adjoint identities.
- `OpCoverage`: the op counter behind the coverage line.

The suite runs in about ten seconds per backend configuration on NdArray.

`run_ranks(n, fn)` runs a collective test's ranks on threads (`burn_tensor.collective`).

Dtype matrix: `DTYPE_CONFIGS` names each configuration ("f32-i32", "f64-i64", "f16-i32",
"bf16-i32") with its backend options, `dtype_configs(*names)` picks some (default
`DEFAULT_CONFIGS`, the two full-precision ones), and `burn_backend = backend_fixture(MyBackend)`
is a `burn_backend` fixture over them.
"""

from ._configs import DEFAULT_CONFIGS, DTYPE_CONFIGS, backend_fixture, dtype_configs
from ._coverage import OpCoverage
from ._ctx import LAYOUTS, SPECIAL, Ctx, sample
from ._ranks import run_ranks

__all__ = [
    "DEFAULT_CONFIGS",
    "DTYPE_CONFIGS",
    "LAYOUTS",
    "SPECIAL",
    "Ctx",
    "OpCoverage",
    "backend_fixture",
    "dtype_configs",
    "run_ranks",
    "sample",
]
