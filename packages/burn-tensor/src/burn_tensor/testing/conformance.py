"""The backend conformance suite: import it into a backend package's test module.

    # tests/test_conformance.py
    from burn_tensor.testing.conformance import *  # noqa: F401,F403

Every test takes the `burn` fixture (see `burn_tensor.testing.plugin`), built from the
`burn_backend` fixture that the package's conftest provides.
"""

from ._suite_activation import *
from ._suite_activation_backward import *
from ._suite_book import *
from ._suite_burn_literals import *
from ._suite_checks_index import *
from ._suite_checks_values import *
from ._suite_coverage import *  # the completeness case: the plugin runs it last
from ._suite_creation import *
from ._suite_device import *
from ._suite_elementwise import *
from ._suite_layout import *
from ._suite_module_attention import *
from ._suite_module_conv import *
from ._suite_module_conv_grad import *
from ._suite_module_conv_literals import *
from ._suite_module_embedding import *
from ._suite_module_interp import *
from ._suite_module_layer_norm import *
from ._suite_module_linear import *
from ._suite_module_literals import *
from ._suite_module_pool import *
from ._suite_optim import *
from ._suite_reduce import *
from ._suite_unfold import *

__all__ = [n for n in list(globals()) if n.startswith("test_")]
