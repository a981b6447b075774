# GENERATED from minitorch/nn/batchnorm.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""``nn.BatchNorm1d`` and ``nn.BatchNorm2d``: batch normalization with learnable scale and shift
and running statistics (see :mod:`minitorch.ops.batchnorm` for the maths and the kernels).

Buffers, as PyTorch: ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``
(int64 0-d) when ``track_running_stats``; parameters ``weight`` (ones) and ``bias`` (zeros) when
``affine`` (no bias with ``bias=False``, PyTorch 2.13's keyword). In training mode
(``module.train()``) the batch's statistics normalize and the running ones are updated:
``running = (1 - momentum) * running + momentum * batch`` (unbiased variance), or a cumulative
average when ``momentum=None``. In eval mode the running statistics normalize (a module without
them keeps using the batch's).
"""
from .. import ops
from ..creation import ones, tensor, zeros
from ..dtypes import int64
from .module import Module
from .parameter import Parameter


class _BatchNorm(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, device=device, dtype=dtype))
            self.bias = Parameter(zeros(num_features, device=device, dtype=dtype)) if bias else None
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.weight is not None:
            self.weight.data.fill_(1)
        if self.bias is not None:
            self.bias.data.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        use_batch_stats = self.training or self.running_mean is None
        update = self.training and self.track_running_stats
        if update:
            if self.num_batches_tracked.dtype is not int64:    # Module.to(dtype=) converts every buffer;
                self.num_batches_tracked = self.num_batches_tracked.long()   # the kernel reads an int64
            self.num_batches_tracked.add_(1)     # on the device: nothing waits for the GPU
        return ops.batch_norm(input, self.running_mean if update or not self.training else None,
                                self.running_var if update or not self.training else None,
                                self.weight, self.bias, use_batch_stats, self.momentum, self.eps,
                                self.num_batches_tracked if update else None)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of [N, C] or [N, C, L] inputs, per channel C."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization of [N, C, H, W] inputs, per channel C (statistics over N, H, W)."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")
