# GENERATED from minitorch/nn/container.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 05
"""Containers: modules that hold other modules, after ``torch.nn``'s.

* :class:`Sequential` runs its modules one after the other: ``Sequential(Linear(8, 4), ReLU())``.
* :class:`ModuleList` is a list of modules (registered, so their parameters are the model's);
  you write the loop in ``forward``.
* :class:`ModuleDict` is the same by name.

Every child is registered under its position (``"0"``, ``"1"``...) or key, so ``state_dict()``
names tensors ``"0.weight"``, exactly as PyTorch does for the same architecture.
"""
from collections import OrderedDict

from .module import Module


def _check_module(module, where):
    if not isinstance(module, Module):
        raise TypeError(f"{where}: {type(module).__name__} is not a Module subclass")
    return module


def _index(idx, n):
    """``idx`` (negative counts from the end) as a position in ``range(n)``, with PyTorch's error."""
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n


class _Indexed(Module):
    """What Sequential and ModuleList share: children keyed "0", "1"... indexed like a list."""

    def _renumber(self, modules):
        self._modules.clear()
        for i, m in enumerate(modules):
            self._modules[str(i)] = m

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self._sliced(idx)
        modules = list(self._modules.values())
        return modules[_index(idx, len(modules))]

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index(idx, len(self))]
        self._modules[key] = _check_module(module, f"{type(self).__name__}.__setitem__")

    def __delitem__(self, idx):
        modules = list(self._modules.values())
        if isinstance(idx, slice):
            del modules[idx]
        else:
            del modules[_index(idx, len(modules))]
        self._renumber(modules)              # keys stay 0..n-1, as PyTorch keeps them

    def append(self, module):
        """Add ``module`` at the end; returns ``self``."""
        self._modules[str(len(self))] = _check_module(module, f"{type(self).__name__}.append")
        return self

    def extend(self, modules):
        """Append every module of an iterable; returns ``self``."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, module):
        """Put ``module`` before position ``index`` (``len(self)`` appends), renumbering the rest."""
        modules = list(self._modules.values())
        n = len(modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        modules.insert(index, _check_module(module, f"{type(self).__name__}.insert"))
        self._renumber(modules)
        return self


class Sequential(_Indexed):
    """Modules applied in order: ``Sequential(m0, m1, m2)(x) == m2(m1(m0(x)))``.

    Build it from modules (keys "0", "1"...) or from one ``OrderedDict`` of name -> module.
    ``seq[i]`` is a module (negative ``i`` counts from the end), ``seq[a:b]`` a new Sequential of
    the same module objects; ``len``, iteration, ``append``, ``extend`` and ``insert`` as a list.

    Raises:
        TypeError: for an argument that is not a Module.
        IndexError: for an index out of range.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self._modules[name] = _check_module(m, "Sequential")
        else:
            for i, m in enumerate(args):
                self._modules[str(i)] = _check_module(m, "Sequential")

    def _sliced(self, idx):                  # keeps the children's names, as PyTorch's slice does
        return Sequential(OrderedDict(list(self._modules.items())[idx]))

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(_Indexed):
    """A list of modules, registered so that ``parameters()``, ``to()`` and ``state_dict()`` see
    them (a plain Python list would hide them). It has no ``forward``: loop over it in yours.

    Raises:
        TypeError: for an element that is not a Module.
        IndexError: for an index out of range.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _sliced(self, idx):
        return ModuleList(list(self._modules.values())[idx])

    def __iadd__(self, modules):
        return self.extend(modules)


class ModuleDict(Module):
    """Modules by name, in insertion order, registered like attributes (``state_dict`` keys are
    ``"name.weight"``). Built from a dict or an iterable of ``(name, module)`` pairs.

    Raises:
        TypeError: for a value that is not a Module.
        KeyError: for a missing name.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self._modules[key] = _check_module(module, "ModuleDict")

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key):
        return self._modules.pop(key)

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        """Add (or replace) the modules of a dict or an iterable of ``(name, module)`` pairs."""
        pairs = modules.items() if hasattr(modules, "items") else modules
        for key, module in pairs:
            self[key] = module
