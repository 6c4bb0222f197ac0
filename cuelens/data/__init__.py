"""Loading and normalising NLI / multiple-choice datasets (docs/methods.md §1)."""

from cuelens.data.dataset import Dataset, Instances, Split
from cuelens.data.loading import load_dataset

__all__ = ["Dataset", "Instances", "Split", "load_dataset"]
