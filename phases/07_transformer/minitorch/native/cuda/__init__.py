# GENERATED from minitorch/native/cuda/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 01
"""The cuda backend: each function takes and returns ``DeviceArray``s, computed by our kernels.

One module per concept; this file gathers their functions so ``native.get(device)`` gives one
namespace with the same names as ``native/cpu.py``.
"""
from .creation import arange, empty, fill_, from_numpy, full, rand, randn, to_numpy
from ...cuda.array import as_strided
from .elementwise import BINARY_OPS, COMPARISONS, UNARY_OPS
from .elementwise import binary, binary_scalar, cast, contiguous, unary, where
from .elementwise import PREDICATES, nan_to_num
from .matrix import matmul, transpose2d, transpose2d_naive
from .random import empty_strided, eye, linspace, normal_, randint, uniform_
from .elementwise import unary_backward
from .optim import sgd_step
from .reduce import sum
from .indexing import copy_, index_add_, nonzero, scatter_add_, take
from .reduce import extreme, var_mean
from .indexing import gather, index_copy_, scatter_
from .indexing import scatter_reduce_
from .random import multinomial, randperm
from .histogram import bincount, histc
from .reduce import fold
from .scan import cumulative
from .sort import mode, sort, unique
from ...cuda.array import joined_view
from .gemm import linear, matmul   # the GEMM ladder, rung chosen per shape (replaces matrix.py's naive matmul)
from .multi_tensor import (adagrad_step, adam_step, grads_clamp_, grads_norm, grads_scale_, rmsprop_step,
                           sgd_step_list)
from .softmax import (cross_entropy, cross_entropy_backward, log_softmax, log_softmax_backward, nll_loss,
                      nll_loss_backward, softmax, softmax_backward)
from .conv import conv2d, conv2d_input_grad, conv2d_max_pool2d, conv2d_weight_grad
from .batchnorm import batch_norm_apply, batch_norm_backward, batch_norm_stats
from .dropout import dropout, dropout_mask, masked_scale
from .pooling import (adaptive_avg_pool2d, adaptive_avg_pool2d_backward, avg_pool2d, avg_pool2d_backward, max_pool2d,
                      max_pool2d_backward)
from .embedding import embedding_backward
from .layernorm import layer_norm, layer_norm_backward
from .attention import flash_attention, flash_attention_backward
from .attention import rows_aligned as flash_rows_aligned
from .attention import flash_attention_mma, flash_attention_mma_backward
from .attention_softmax import attention_seed, attention_softmax, attention_softmax_backward
