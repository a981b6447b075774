# phase: 04
"""Data sets of the course.

``load_sales`` reads phase 04's retail sales table (yours at ``data/sales.tsv``, else a synthetic
stand-in generated and cached on first use: the original is private); ``generate_sales`` makes the
synthetic one. See :mod:`minitorch.data.sales`.
"""
from .sales import generate_sales, load_sales
# >>> phase 04
from .dataloader import DataLoader, default_collate
from .dataset import Dataset, Subset, TensorDataset, random_split, split_first_fraction
# <<< phase 04
# >>> phase 06
from .fashion_mnist import FashionMNIST
from .mnist import MNIST
# <<< phase 06
# >>> phase 07
from .shakespeare import CharTokenizer, TinyShakespeare
# <<< phase 07
