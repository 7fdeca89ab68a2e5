"""The layers of wick.nn, one file per family as in torch.nn.modules."""

from wick.nn.modules.activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh  # noqa: F401
from wick.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from wick.nn.modules.container import ModuleDict, ModuleList, Sequential  # noqa: F401
from wick.nn.modules.conv import Conv2d  # noqa: F401
from wick.nn.modules.dropout import Dropout  # noqa: F401
from wick.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from wick.nn.modules.linear import Identity, Linear  # noqa: F401
from wick.nn.modules.loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss  # noqa: F401
from wick.nn.modules.module import Module  # noqa: F401
from wick.nn.modules.normalization import LayerNorm  # noqa: F401
from wick.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from wick.nn.modules.sparse import Embedding  # noqa: F401
# attention
from wick.nn.modules.attention import MultiheadAttention  # noqa: F401,E402
from wick.nn.modules.transformer import Transformer, TransformerEncoder, TransformerEncoderLayer  # noqa: F401,E402
