"""Backend conformance suite of burn-py, shipped as a pytest plugin.

Every op of the Tensor API (the Burn Book's Basic, Numeric, Float, Int, Bool and Activation tables
of both editions, plus burn_tensor's extra ops) is run on the backend under test, for every kind it
applies to, with its inputs built contiguous and through view ops (permuted, flipped, strided,
expanded), over edge cases (empty dims, size-1 broadcasting, negative dims and indices, large values,
NaN/inf), and compared with numpy float64 references computed independently in the suite (never
by a backend), plus literal input/output pairs from Burn's own tests. Result kind, dtype, shape and
device are checked too, so running it over several dtype configurations is the dtype matrix.

Running it on a new backend takes one conftest and a one-line test module::

    # my_backend/tests/conftest.py
    import pytest
    from my_backend import MyBackend

    @pytest.fixture(scope="session", params=["f32", "f64"])
    def burn_backend(request):          # overrides the plugin's fixture
        if request.param == "f64":
            return MyBackend(float_dtype="float64", int_dtype="int64")
        return MyBackend()

    # my_backend/tests/test_conformance.py
    from burn_tensor.testing.conformance import *  # noqa: F401,F403

Without a conftest the plugin's `burn_backend` fixture builds the backend registered under the
`burn.backends` entry-point name given by `--burn-backend NAME` (default `ndarray`), so a decorator
package can also run `pytest tests/test_conformance.py --burn-backend=opencl`.

Fixtures (from `burn_tensor.testing.plugin`, registered through the `pytest11` entry point):
- `burn_backend`: the backend under test.
- `burn`: a `Ctx` for it: `burn.device`, `burn.fdt` / `burn.idt` (element dtypes), `burn.tol`
  (per-dtype tolerance), `burn.view_input(x, kind, layout)` -> (tensor, float64 reference input),
  `burn.assert_close` / `assert_equal` / `assert_result` (kind + dtype + shape + device + values).

Module ops (pooling, interpolation, embedding) run through `burn_tensor.module`, and backward
primitives (`avg_pool2d_backward`, `interpolate_backward`, `relu_backward`, ...) are called on the
backend directly, as Autodiff calls them, against nested-loop references (`_ref_pool`,
`_ref_interp`) and adjoint identities.

The suite modules (`_suite_elementwise`, `_suite_layout`, `_suite_reduce`, `_suite_creation`,
`_suite_activation`, `_suite_activation_backward`, `_suite_module_pool`, `_suite_module_interp`,
`_suite_module_embedding`, `_suite_module_literals`, `_suite_burn_literals`, `_suite_module_conv`
(+ `_grad`, `_literals`, with the float64 references in `_ref_conv`), `_suite_device`) are table
driven: adding an op usually means one row. `_suite_coverage` holds the completeness case: the plugin
counts every op of the table that suite tests reach on the backend under test, runs that case last,
and prints "N of 298 ops of the table covered" per backend at the end of the session.
It runs in about ten seconds per backend configuration on NdArray.

`run_ranks(n, fn)` runs a collective test's ranks on threads (`burn_tensor.collective`).
"""

from ._ctx import LAYOUTS, SPECIAL, Ctx, sample
from ._ranks import run_ranks

__all__ = ["LAYOUTS", "SPECIAL", "Ctx", "run_ranks", "sample"]
