"""wick.nn: Module, Parameter, the layers, functional, init and utils (torch.nn)."""

from wick.nn.parameter import Parameter  # noqa: F401
from wick.nn import functional  # noqa: F401
from wick.nn import init  # noqa: F401
from wick.nn.modules import *  # noqa: F401,F403
from wick.nn.modules import Module  # noqa: F401
from wick.nn import utils  # noqa: F401
from wick.nn import parallel  # noqa: F401
