"""wick.keras: a Keras-style training loop over wick.nn modules - Model.compile, fit, evaluate,
predict, History - and its callbacks (EarlyStopping, ModelCheckpoint, CSVLogger,
LearningRateScheduler). The C++ twin is nn::KerasModel (nn/fit.h)."""

from wick.keras import callbacks  # noqa: F401
from wick.keras.callbacks import History  # noqa: F401
from wick.keras.model import Model  # noqa: F401
