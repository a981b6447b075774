# GENERATED from minitorch/nn/module.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 03
"""``Module``: the base class of every layer and model, after ``torch.nn.Module``.

Assigning a :class:`Parameter` or another module to an attribute registers it, so a model is a
tree: ``parameters()`` walks it in registration order, ``state_dict()`` names every tensor by its
path (``"fc1.weight"``), and ``to(device)`` moves them all.
"""
from collections import OrderedDict

from ..autograd.grad_mode import no_grad
from .parameter import Parameter, zero_grads
import os  # noqa: E402
from collections import namedtuple  # noqa: E402

# What load_state_dict returns, as in PyTorch: the keys it did not find and the keys it did not use.
_IncompatibleKeys = namedtuple("_IncompatibleKeys", ["missing_keys", "unexpected_keys"])
from ..tensor import Tensor  # noqa: E402


class Module:
    """Subclass it, create parameters and submodules in ``__init__``, compute in ``forward``."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration by attribute assignment -------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign '{name}' before Module.__init__() is called; "
                                 "call super().__init__() first in your module's __init__")
        if name in self._buffers and (value is None or isinstance(value, Tensor)) and not isinstance(value, Parameter):
            self._buffers[name] = value         # assigning a tensor to a buffer's name updates the buffer
            return
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):        # only called when normal lookup fails
        for registry in ("_parameters", "_buffers", "_modules"):
            found = self.__dict__.get(registry, {})
            if name in found:
                return found[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_buffer(self, name, tensor):
        """A tensor that belongs to the module's state (saved, moved) but is not trained."""
        self._buffers[name] = tensor

    # ---- running --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- walking the tree -------------------------------------------------------------------
    def named_children(self):
        return iter(self._modules.items())

    def children(self):
        return (m for _, m in self.named_children())

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """``(path, module)`` for this module and every submodule, depth first. A module reachable
        by two paths (shared) comes once, under its first path, unless ``remove_duplicate=False``;
        ``memo`` is the set of modules already given (PyTorch's signature)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """``(path, parameter)`` pairs in registration order. A parameter registered under two
        paths (tied weights, a shared module) comes once, under its first path, unless
        ``remove_duplicate=False`` (then every path, as ``state_dict`` lists them)."""
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for path, module in modules:
            for name, p in module._parameters.items():
                if remove_duplicate and id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{path}.{name}" if path else name), p

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """``(path, buffer)`` pairs; as :meth:`named_parameters`, each buffer once unless
        ``remove_duplicate=False``."""
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for path, module in modules:
            for name, b in module._buffers.items():
                if remove_duplicate and b is not None and id(b) in seen:
                    continue
                seen.add(id(b))
                yield (f"{path}.{name}" if path else name), b

    # ---- training helpers -------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget accumulated gradients (``None``, or zeros when ``set_to_none=False``)."""
        zero_grads(self.parameters(), set_to_none)

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    @no_grad()
    def to(self, device=None, dtype=None):
        """Move (or convert) every parameter and buffer in place; returns ``self``.

        Parameters keep their identity, so an optimizer made before ``to()`` still holds them.
        Nothing is recorded (parameters stay leaves), as in PyTorch.
        """
        for p in self.parameters():
            moved = p.detach().to(device=device, dtype=dtype)
            p._data, p._device = moved._data, moved.device
            if p.grad is not None:
                p.grad = p.grad.to(device=device, dtype=dtype)
        for m in self.modules():
            for name, b in m._buffers.items():
                if b is not None:
                    # a dtype converts floating buffers only: a step counter stays an integer
                    cast = dtype if b.dtype.is_floating_point else None
                    m._buffers[name] = b.to(device=device, dtype=cast)
        return self

    def cuda(self, device=None):
        return self.to(device if device is not None else "cuda")

    def cpu(self):
        return self.to("cpu")

    # ---- saving and loading ---------------------------------------------------------------
    def state_dict(self):
        """``OrderedDict`` of path -> tensor (detached, sharing memory) for parameters and buffers.
        Every path is a key: a tied parameter (GPT's ``lm_head.weight`` is
        ``transformer.wte.weight``) is listed under each of its names, as PyTorch does."""
        state = OrderedDict()
        for path, module in self.named_modules(remove_duplicate=False):     # PyTorch's order: per module,
            prefix = f"{path}." if path else ""                                # parameters then buffers
            state.update((prefix + name, p.detach()) for name, p in module._parameters.items())
            state.update((prefix + name, b.detach()) for name, b in module._buffers.items() if b is not None)
        for name in self._unsaved_buffer_paths():
            state.pop(name, None)
        return state

    def load_state_dict(self, state_dict, strict=True):
        """Copy tensors from ``state_dict`` into this module's parameters and buffers.

        With ``strict=False`` missing and unexpected keys are returned instead of raised; a shape
        mismatch raises all the same (as in PyTorch). A tied parameter is expected under each of
        its names; each loads into the same parameter (the last one stays, as in PyTorch).

        Raises:
            RuntimeError: listing missing and unexpected keys (when ``strict``) and any shape
                mismatch, naming the key and both shapes.
        """
        if isinstance(state_dict, (str, os.PathLike)):      # a .safetensors file (ours or PyTorch's)
            from ..serialization import load
            state_dict = load(state_dict)
        own = dict(self.named_parameters(remove_duplicate=False))     # a tied parameter under each name
        own.update(dict(self.named_buffers(remove_duplicate=False)))
        for name in self._unsaved_buffer_paths():
            own.pop(name, None)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}: "
                               f"missing keys {missing}, unexpected keys {unexpected}")
        for name, target in own.items():
            if name not in state_dict:
                continue
            source = state_dict[name]
            if tuple(source.shape) != tuple(target.shape):
                raise RuntimeError(f"load_state_dict: size mismatch for {name}: copying a param with shape "
                                   f"{tuple(source.shape)}, the shape in current model is {tuple(target.shape)}")
            value = source.detach().to(device=target.device, dtype=target.dtype)
            target._data = value._backend.contiguous(value._data)   # a copy: training must not touch the source
        return _IncompatibleKeys(missing, unexpected)
        return missing, unexpected

    # ---- printing -------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + (")" if not lines else "\n  " + "\n  ".join(lines) + "\n)")

    # ---- phase 05: buffers that stay out of the checkpoint, apply, add_module, PyTorch's repr ---
    def register_buffer(self, name, tensor, persistent=True):  # noqa: F811 - replaces phase 03's
        """Register ``tensor`` (or None) as a buffer: state that is not trained (running statistics,
        masks) but moves with ``to()`` and, when ``persistent``, is saved in ``state_dict()``.

        Raises:
            TypeError: if ``tensor`` is neither a Tensor nor None.
            KeyError: if ``name`` is empty, contains ".", or is already an attribute that is not a buffer.
        """
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"buffer name must be a non-empty string without \".\", got {name!r}")
        if name not in self._buffers and hasattr(self, name):
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        non_persistent = self.__dict__.setdefault("_non_persistent_buffers", set())
        (non_persistent.discard if persistent else non_persistent.add)(name)

    def buffers(self):
        """Every buffer of the tree (None ones left out), in ``named_buffers`` order."""
        return (b for _, b in self.named_buffers() if b is not None)

    def __delattr__(self, name):
        """``del model.name`` unregisters a parameter, buffer or child module (or deletes a plain attribute)."""
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def _unsaved_buffer_paths(self):
        """Paths (``"block.mask"``) of the buffers a state_dict leaves out: those registered with
        ``persistent=False``, and those set to None."""
        for path, module in self.named_modules(remove_duplicate=False):
            non_persistent = module.__dict__.get("_non_persistent_buffers", ())
            for name, b in module._buffers.items():
                if b is None or name in non_persistent:
                    yield f"{path}.{name}" if path else name

    def add_module(self, name, module):
        """Register ``module`` (or None) as the child ``name``, as ``self.name = module`` does.

        Raises:
            TypeError: if ``module`` is not a Module (or None).
            KeyError: if ``name`` is empty or contains ".".
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"module name must be a non-empty string without \".\", got {name!r}")
        self._modules[name] = module

    def apply(self, fn):
        """Call ``fn(m)`` on every submodule, children before their parent, then on ``self``;
        returns ``self`` (``model.apply(init_weights)``)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def __repr__(self):  # noqa: F811 - replaces phase 03's with PyTorch's exact layout
        """``Name(extra)`` for a leaf module; with children, one indented ``(name): repr`` line each
        (after the extra lines), and the closing parenthesis on its own line, as PyTorch prints."""
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        lines += [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        if not self._modules and len(lines) <= 1:
            return f"{type(self).__name__}({extra})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"
