"""The conformance suite's conv backward and unfold4d tests, run on the burn_tensor defaults.

NdArray overrides the default decompositions of the conv backward primitives and of unfold4d,
so its conformance run never reaches them; here they run on NdArray with those overrides removed
(both dtype configurations), against the suite's float64 references.
"""

from __future__ import annotations

from burn_backend_tests import backend_fixture
from burn_ndarray import NdArray
from burn_tensor._ops_module import ModuleOps
from burn_backend_tests.suites.module_conv import test_conv_unfold4d  # noqa: F401
from burn_backend_tests.suites.module_conv_grad import *


class DefaultsNdArray(NdArray):
    """NdArray whose conv backward passes and unfold4d are the burn_tensor defaults."""

    name = "ndarray-defaults"
    conv2d_x_backward = ModuleOps.conv2d_x_backward
    conv2d_weight_backward = ModuleOps.conv2d_weight_backward
    conv_transpose2d_x_backward = ModuleOps.conv_transpose2d_x_backward
    conv_transpose2d_weight_backward = ModuleOps.conv_transpose2d_weight_backward
    unfold4d = ModuleOps.unfold4d


#: the plugin's fixture overridden for this module: the suite runs on the defaults
burn_backend = backend_fixture(DefaultsNdArray)


def test_the_suite_runs_on_the_defaults(burn):
    b = burn.backend
    assert isinstance(b, DefaultsNdArray), b
    assert type(b).conv_transpose2d_x_backward is ModuleOps.conv_transpose2d_x_backward
