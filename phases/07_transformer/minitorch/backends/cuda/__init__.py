# GENERATED from minitorch/backends/cuda/__init__.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""``minitorch.backends.cuda``: switches for our cuda kernels (``torch.backends.cuda``)."""


class _MatmulFlags:
    """``backends.cuda.matmul``: how float32 matrix products may run on tensor cores.

    ``allow_tf32`` (bool, default False): let float32 ``matmul``/``bmm``/``nn.Linear`` use the
    TF32 ``mma.sync`` GEMM (inputs rounded to 10 mantissa bits, float32 accumulation), ~8x the
    float32 peak on an H100 at a relative error near 1e-3. Off, float32 stays float32.
    """

    def __init__(self):
        self.allow_tf32 = False

    def __setattr__(self, name, value):
        if name != "allow_tf32":
            raise AttributeError(f"backends.cuda.matmul has no switch {name!r}; expected 'allow_tf32'")
        if not isinstance(value, bool):
            raise TypeError(f"backends.cuda.matmul.allow_tf32 must be a bool, got {type(value).__name__}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _MatmulFlags()


_flash_sdp = True


def enable_flash_sdp(enabled):
    """Allow (True, the default) or forbid ``F.scaled_dot_product_attention`` to take the
    FlashAttention kernels (``minitorch/cuda/attention/``) where they apply; forbidden, it always
    runs the decomposition (matmul, softmax, matmul). PyTorch's ``torch.backends.cuda.enable_flash_sdp``.

    Raises:
        TypeError: ``enabled`` is not a bool.
    """
    global _flash_sdp
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_flash_sdp: expected a bool, got {type(enabled).__name__}")
    _flash_sdp = enabled


def flash_sdp_enabled():
    """Whether ``scaled_dot_product_attention`` may use the FlashAttention kernels (see
    :func:`enable_flash_sdp`)."""
    return _flash_sdp

_fused_softmax_sdp = True


def enable_fused_softmax_sdp(enabled):
    """Allow (True, the default) or forbid ``F.scaled_dot_product_attention``'s decomposition on cuda
    to run scale, mask, softmax and dropout as one fused kernel each way
    (``minitorch/cuda/attention_softmax.cu``); forbidden, it runs them step by step, as on cpu.
    minitorch's own switch (PyTorch's math backend has no such choice).

    Raises:
        TypeError: ``enabled`` is not a bool.
    """
    global _fused_softmax_sdp
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_fused_softmax_sdp: expected a bool, got {type(enabled).__name__}")
    _fused_softmax_sdp = enabled


def fused_softmax_sdp_enabled():
    """Whether the cuda decomposition may fuse scale, mask, softmax and dropout (see
    :func:`enable_fused_softmax_sdp`)."""
    return _fused_softmax_sdp

_flash_3xtf32_sdp = True


def enable_flash_3xtf32_sdp(enabled):
    """Allow (True, the default) or forbid the float32 flash path of ``F.scaled_dot_product_attention``
    to run on the tensor cores as 3xTF32 (``minitorch/cuda/attention/01c_flash_fp32_3xtf32.cu``:
    float32 accuracy, each product as three TF32 mmas; sm_80 and later); forbidden, it runs the FFMA
    kernels (``01b_flash_fp32_tiled.cu``). Read at each forward; its backward follows the forward.
    minitorch's own switch (PyTorch's memory-efficient backend always takes its 3xTF32 kernel on sm_80+).

    Raises:
        TypeError: ``enabled`` is not a bool.
    """
    global _flash_3xtf32_sdp
    if not isinstance(enabled, bool):
        raise TypeError(f"enable_flash_3xtf32_sdp: expected a bool, got {type(enabled).__name__}")
    _flash_3xtf32_sdp = enabled


def flash_3xtf32_sdp_enabled():
    """Whether float32 flash attention may run 3xTF32 on the tensor cores (see :func:`enable_flash_3xtf32_sdp`)."""
    return _flash_3xtf32_sdp
