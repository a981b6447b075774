# GENERATED from minitorch/data/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""Data sets of the course.

``load_sales`` reads phase 04's retail sales table (yours at ``data/sales.tsv``, else a synthetic
stand-in generated and cached on first use: the original is private); ``generate_sales`` makes the
synthetic one. See :mod:`minitorch.data.sales`.
"""
from .sales import generate_sales, load_sales
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset, random_split, split_first_fraction
from .fashion_mnist import FashionMNIST
from .mnist import MNIST
from .shakespeare import CharTokenizer, TinyShakespeare
