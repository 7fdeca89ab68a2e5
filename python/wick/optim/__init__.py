"""wick.optim: the optimizers and learning-rate schedules of torch.optim."""

from wick.optim import lr_scheduler  # noqa: F401
from wick.optim.adadelta import Adadelta  # noqa: F401
from wick.optim.adagrad import Adagrad  # noqa: F401
from wick.optim.adam import Adam, AdamW  # noqa: F401
from wick.optim.adam_variants import Adamax, NAdam, RAdam  # noqa: F401
from wick.optim.lbfgs import LBFGS  # noqa: F401
from wick.optim.optimizer import Optimizer  # noqa: F401
from wick.optim.rmsprop import RMSprop  # noqa: F401
from wick.optim.sgd import SGD  # noqa: F401
