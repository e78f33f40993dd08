"""The backend conformance suite: import it into a backend package's test module.

    # tests/test_conformance.py
    from burn_backend_tests.conformance import *  # noqa: F401,F403

Every test takes the `burn` fixture (see `burn_backend_tests.plugin`), built from the
`burn_backend` fixture that the package's conftest provides.
"""

from .suites.activation import *
from .suites.activation_backward import *
from .suites.book import *
from .suites.burn_literals import *
from .suites.checks_index import *
from .suites.checks_values import *
from .suites.coverage import *  # the completeness case: the plugin runs it last
from .suites.creation import *
from .suites.ctc import *
from .suites.device import *
from .suites.elementwise import *
from .suites.elementwise_scalar import *
from .suites.grid import *
from .suites.layout import *
from .suites.linalg import *
from .suites.logic import *
from .suites.module_attention import *
from .suites.module_attention_dropout import *
from .suites.module_conv import *
from .suites.module_conv_act import *
from .suites.module_conv_grad import *
from .suites.module_conv_literals import *
from .suites.module_dropout import *
from .suites.module_embedding import *
from .suites.module_interp import *
from .suites.module_layer_norm import *
from .suites.module_linear import *
from .suites.module_linear_half import *
from .suites.module_literals import *
from .suites.module_pool import *
from .suites.module_volume import *
from .suites.odds import *
from .suites.optim import *
from .suites.quantization import *
from .suites.reduce import *
from .suites.rnn import *
from .suites.signal import *
from .suites.unfold import *

__all__ = [n for n in list(globals()) if n.startswith("test_")]
