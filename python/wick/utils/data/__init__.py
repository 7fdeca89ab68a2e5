"""wick.utils.data: Dataset, TensorDataset, IterableDataset, samplers, default_collate and
DataLoader (torch.utils.data); LoaderTimeline and loader_span, wick's record of where each
batch's time went."""

from wick.utils.data import distributed  # noqa: F401
from wick.utils.data._worker import get_worker_info  # noqa: F401
from wick.utils.data.dataloader import DataLoader, default_collate  # noqa: F401
from wick.utils.data.dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split  # noqa: F401
from wick.utils.data.distributed import DistributedSampler  # noqa: F401
from wick.utils.data.iterable import ChainDataset, IterableDataset  # noqa: F401
from wick.utils.data.timeline import LoaderTimeline, loader_span  # noqa: F401
from wick.utils.data.sampler import (  # noqa: F401
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
