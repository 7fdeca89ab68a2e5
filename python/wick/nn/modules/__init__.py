"""The layers of wick.nn, one file per family as in torch.nn.modules."""

from wick.nn.modules.activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Tanh  # noqa: F401
from wick.nn.modules.activation_more import ELU, SELU, Hardsigmoid, Hardswish, Hardtanh, Mish, ReLU6, Softplus  # noqa: F401
from wick.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from wick.nn.modules.container import ModuleDict, ModuleList, Sequential  # noqa: F401
from wick.nn.modules.conv import Conv2d  # noqa: F401
from wick.nn.modules.dropout import Dropout  # noqa: F401
from wick.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from wick.nn.modules.linear import Identity, Linear  # noqa: F401
from wick.nn.modules.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss  # noqa: F401
from wick.nn.modules.module import Module  # noqa: F401
from wick.nn.modules.normalization import LayerNorm  # noqa: F401
# rnn: recurrent layers and cells
from wick.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase  # noqa: F401,E501
from wick.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d  # noqa: F401
from wick.nn.modules.sparse import Embedding  # noqa: F401
# nnlayers: convolution, pooling, normalization and resampling, part two
from wick.nn.modules.conv_more import Conv1d, ConvTranspose2d  # noqa: F401
from wick.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from wick.nn.modules.dropout_more import Dropout2d  # noqa: F401
from wick.nn.modules.fold import Fold, Unfold  # noqa: F401
from wick.nn.modules.normalization_more import GroupNorm, InstanceNorm2d  # noqa: F401
from wick.nn.modules.pooling_more import AdaptiveAvgPool1d, AdaptiveMaxPool2d, AvgPool1d, MaxPool1d  # noqa: F401
from wick.nn.modules.resampling import ConstantPad2d, PixelShuffle, PixelUnshuffle, ReflectionPad2d, ReplicationPad2d, Upsample, ZeroPad2d  # noqa: F401
from wick.nn.modules.sparse_more import EmbeddingBag  # noqa: F401


# pyapi: containers of parameters
from wick.nn.modules.container import ParameterDict, ParameterList  # noqa: F401,E402

# attention
from wick.nn.modules.attention import MultiheadAttention  # noqa: F401,E402
from wick.nn.modules.transformer import (  # noqa: F401,E402
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
