# GENERATED from minitorch/data/shakespeare.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 07
"""Tiny Shakespeare for a character-level language model (as Karpathy's char-rnn and nanoGPT).

The text is ``data/shakespeare/input.txt`` (1.1M characters, public domain; how it was cut from
the Gutenberg plays: ``data/shakespeare/README.md``). A :class:`CharTokenizer` maps each distinct
character to an integer, the first 90% of the encoded text trains and the last 10% validates,
and :func:`get_batch` samples ``batch_size`` random windows of ``block_size`` characters: the
model reads ``x`` and learns to predict ``y``, the same window shifted by one character.
"""
from pathlib import Path

import numpy as np

from ..creation import arange, from_numpy, randint
from ..device import as_device
from .mnist import find_files, search_dirs

TRAIN_FRACTION = 0.9


def load_text(root="data/shakespeare"):
    """The corpus as one string (``root/input.txt``; a relative root is also tried against the
    repository root). Raises ``FileNotFoundError`` naming every directory tried."""
    (path,) = find_files(("input.txt",), search_dirs(root), "Tiny Shakespeare")
    return Path(path).read_text(encoding="utf-8")


class CharTokenizer:
    """One token per distinct character of ``text``, numbered in sorted (code point) order.

    ``vocab_size`` tokens; ``encode("To be")`` -> list of ints, ``decode(ids)`` -> str.
    Raises ``ValueError`` naming the characters (encode) or ids (decode) outside the vocabulary.
    """

    def __init__(self, text):
        if not text:
            raise ValueError("CharTokenizer needs a non-empty text to build its vocabulary from")
        self.itos = sorted(set(text))
        self.stoi = {ch: i for i, ch in enumerate(self.itos)}

    @property
    def vocab_size(self):
        return len(self.itos)

    def encode(self, text):
        """``text`` (str) as a list of token ids."""
        unknown = sorted(set(text) - self.stoi.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary of {self.vocab_size}: "
                             f"{', '.join(map(repr, unknown))}")
        return [self.stoi[ch] for ch in text]

    def decode(self, ids):
        """Token ids (a list, a NumPy array or a 1-D tensor) as a str."""
        ids = [int(i) for i in (ids.tolist() if hasattr(ids, "tolist") else ids)]
        bad = sorted({i for i in ids if not 0 <= i < self.vocab_size})
        if bad:
            raise ValueError(f"token ids outside [0, {self.vocab_size}): {bad}")
        return "".join(self.itos[i] for i in ids)


class TinyShakespeare:
    """The corpus, its tokenizer and its split: ``train`` and ``val`` are int64 NumPy arrays of
    token ids (the first ``train_fraction`` of the text, then the rest)."""

    def __init__(self, text=None, train_fraction=TRAIN_FRACTION):
        text = load_text() if text is None else text
        self.tokenizer = CharTokenizer(text)
        ids = np.asarray(self.tokenizer.encode(text), dtype=np.int64)
        cut = int(train_fraction * len(ids))
        self.train, self.val = ids[:cut], ids[cut:]
        self._device_copies = {}

    def split(self, name):
        """The ids of split ``"train"`` or ``"val"``."""
        if name not in ("train", "val"):
            raise ValueError(f"split must be 'train' or 'val', got {name!r}")
        return self.train if name == "train" else self.val

    def get_batch(self, split, batch_size, block_size, generator=None, device=None):
        """``(x, y)``, each ``[batch_size, block_size]`` int64 on ``device`` (default cpu): random
        windows of the split, ``y[b, t] = x[b, t + 1]`` (the next character).

        The window starts come from ``minitorch.randint`` on the cpu ``generator`` (the same seed
        gives the same batches on every device); only they cross to the device (``batch_size``
        int64s): the split is copied to ``device`` once, and the windows are gathered there with
        one ``index_select``.

        Raises ``ValueError`` if the split is not longer than ``block_size``."""
        data = self._on(split, device)
        if len(data) <= block_size:
            raise ValueError(f"the {split} split has {len(data)} tokens: too few for windows of "
                             f"block_size + 1 = {block_size + 1}")
        starts = randint(len(data) - block_size, (batch_size, 1), generator=generator).to(data.device)
        positions = starts + arange(block_size + 1, device=data.device)         # [B, T + 1]
        chunk = data.index_select(0, positions.reshape(-1)).reshape(batch_size, block_size + 1)
        return chunk[:, :-1].contiguous(), chunk[:, 1:].contiguous()

    def _on(self, split, device):
        """The split as an int64 tensor on ``device``, copied there on first use."""
        ids, key = self.split(split), (split, str(as_device(device)))
        if key not in self._device_copies:
            self._device_copies[key] = from_numpy(ids).to(key[1])
        return self._device_copies[key]


_DEFAULT = None


def default():
    """The corpus of ``data/shakespeare`` (read once, then cached)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = TinyShakespeare()
    return _DEFAULT


def get_batch(split, batch_size, block_size, generator=None, device=None):
    """:meth:`TinyShakespeare.get_batch` on the default corpus."""
    return default().get_batch(split, batch_size, block_size, generator=generator, device=device)
