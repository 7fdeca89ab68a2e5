"""wick.utils: data loading (torch.utils)."""

from wick.utils import data  # noqa: F401
