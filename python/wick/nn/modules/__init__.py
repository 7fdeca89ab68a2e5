"""The layers of wick.nn, each in the file where torch.nn.modules defines it, so that
wick.nn.modules.<file>.<Class> names the class wherever torch.nn.modules.<file>.<Class> does."""

from wick.nn.modules.activation import (  # noqa: F401
    ELU, GELU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSoftmax, Mish,
    MultiheadAttention, ReLU, ReLU6, Sigmoid, SiLU, Softmax, Softplus, Tanh)
from wick.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from wick.nn.modules.container import (  # noqa: F401
    ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential)
from wick.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from wick.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from wick.nn.modules.dropout import Dropout, Dropout2d  # noqa: F401
from wick.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from wick.nn.modules.fold import Fold, Unfold  # noqa: F401
from wick.nn.modules.instancenorm import InstanceNorm2d  # noqa: F401
from wick.nn.modules.linear import Identity, Linear  # noqa: F401
from wick.nn.modules.loss import (  # noqa: F401
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss,
    SmoothL1Loss)
from wick.nn.modules.module import Module  # noqa: F401
from wick.nn.modules.normalization import GroupNorm, LayerNorm  # noqa: F401
from wick.nn.modules.padding import (  # noqa: F401
    ConstantPad2d, ReflectionPad2d, ReplicationPad2d, ZeroPad2d)
from wick.nn.modules.pixelshuffle import PixelShuffle, PixelUnshuffle  # noqa: F401
from wick.nn.modules.pooling import (  # noqa: F401
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
    MaxPool2d)
from wick.nn.modules.rnn import (  # noqa: F401
    GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase)
from wick.nn.modules.sparse import Embedding, EmbeddingBag  # noqa: F401
from wick.nn.modules.transformer import (  # noqa: F401
    Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
    TransformerEncoderLayer)
from wick.nn.modules.upsampling import Upsample  # noqa: F401

# As torch.nn.modules: `from wick.nn.modules import *` (wick.nn's) takes the layers, not the files.
__all__ = sorted(name for name, value in globals().items() if isinstance(value, type))
