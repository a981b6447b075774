# GENERATED from minitorch/data/idx.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 06
"""Read IDX files, the format MNIST ships in, and check them against known md5 sums.

The IDX format (Yann LeCun, http://yann.lecun.com/exdb/mnist/, "THE IDX FILE FORMAT"):

    offset 0   magic number: 0x00 0x00 <dtype code> <ndim>       (4 bytes)
    offset 4   ndim dimensions, each a big-endian uint32         (4 * ndim bytes)
    then       the data, row-major (last index fastest), big-endian

    dtype codes: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32, 0x0E float64

So MNIST's image files start with 0x00000803 (= 2051: uint8, 3-d) and its label files with
0x00000801 (= 2049: uint8, 1-d). Files may be gzip-compressed; the reader decides by the gzip
magic bytes ``1f 8b``, not by the file name.

Every check raises ``ValueError`` whose message starts with the path and says what was expected
and what was found, e.g.::

    data/mnist/train-images-idx3-ubyte.gz: truncated: header says 60000×28×28 = 47040000 bytes
    of uint8, found 1234
"""
import gzip
import hashlib
import os
import struct
import zlib
from math import prod

import numpy as np

GZIP_MAGIC = b"\x1f\x8b"

# dtype code -> big-endian NumPy dtype of the data on disk
IDX_DTYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}

MAX_NDIM = 4

# md5 of the *uncompressed* bytes of the canonical MNIST files (data/mnist/README.md);
# keys are the file names as shipped (gzip-compressed).
MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "6bbc9ace898e44ae57da46a324031adb",
    "train-labels-idx1-ubyte.gz": "a25bea736e30d166cdddb491f175f624",
    "t10k-images-idx3-ubyte.gz": "2646ac647ad5339dbf082846283269ea",
    "t10k-labels-idx1-ubyte.gz": "27ae3e4e09519cfbb04c329615203637",
}


def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def _open_uncompressed(path):
    """A binary file object over the uncompressed bytes of ``path`` (plain or gzip)."""
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def _read_all(path):
    """The uncompressed bytes of ``path``; a damaged gzip stream is a ``ValueError``."""
    with _open_uncompressed(path) as f:
        try:
            return f.read()
        except (EOFError, OSError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
            raise ValueError(f"{path}: damaged gzip stream: {e}") from e


def _dtype_name(dtype):
    return dtype.newbyteorder("=").name


def read_idx(path):
    """Read an IDX file (plain or gzip-compressed) into a NumPy array.

    Args:
        path: str or ``os.PathLike``. Gzip is detected by the first two bytes (``1f 8b``).

    Returns:
        ``numpy.ndarray`` of the shape in the header, native byte order, C-contiguous and
        writable; dtype uint8, int8, int16, int32, float32 or float64 from the dtype code.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError (message starts with the path) when: the file is shorter than its header; the
        first two magic bytes are not zero; the dtype code is unknown; ndim is not 1..4; the data
        is shorter (truncated) or longer (trailing bytes) than prod(dims) * itemsize; the gzip
        stream is damaged.
    """
    path = os.fspath(path)
    raw = _read_all(path)

    if len(raw) < 4:
        raise ValueError(f"{path}: too short for an IDX header: expected at least 4 bytes "
                         f"(magic number), found {len(raw)}")
    zero0, zero1, code, ndim = raw[0], raw[1], raw[2], raw[3]
    if zero0 != 0 or zero1 != 0:
        raise ValueError(f"{path}: bad IDX magic number 0x{raw[:4].hex()}: expected the first two "
                         f"bytes to be 0x00 0x00, found 0x{zero0:02x} 0x{zero1:02x} "
                         f"(not an IDX file?)")
    if code not in IDX_DTYPES:
        known = ", ".join(f"0x{c:02x} {_dtype_name(d)}" for c, d in IDX_DTYPES.items())
        raise ValueError(f"{path}: unknown IDX dtype code 0x{code:02x} in magic number "
                         f"0x{raw[:4].hex()}: expected one of {known}")
    if not 1 <= ndim <= MAX_NDIM:
        raise ValueError(f"{path}: unsupported IDX ndim {ndim} in magic number 0x{raw[:4].hex()}: "
                         f"expected 1..{MAX_NDIM}")

    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: truncated header: magic number says {ndim} dimensions, "
                         f"expected {header} header bytes, found {len(raw)}")
    dims = struct.unpack(f">{ndim}I", raw[4:header])

    dtype = IDX_DTYPES[code]
    expected = prod(dims) * dtype.itemsize
    found = len(raw) - header
    if found != expected:
        what = "truncated" if found < expected else "trailing bytes"
        shape = "×".join(str(d) for d in dims)
        raise ValueError(f"{path}: {what}: header says {shape} = {expected} bytes of "
                         f"{_dtype_name(dtype)}, found {found}")

    data = np.frombuffer(raw, dtype=dtype, count=prod(dims), offset=header)
    # astype copies: the result owns its memory (writable) and is in native byte order
    return data.astype(dtype.newbyteorder("="), copy=True).reshape(dims)


def md5_of_uncompressed(path, chunk_size=1 << 20):
    """Hex md5 of the uncompressed bytes of ``path`` (gzip detected by magic bytes).

    Streams the file in ``chunk_size``-byte chunks. Raises ``ValueError`` naming the path if
    the gzip stream is damaged, ``FileNotFoundError`` if there is no file.
    """
    path = os.fspath(path)
    h = hashlib.md5()
    with _open_uncompressed(path) as f:
        try:
            while chunk := f.read(chunk_size):
                h.update(chunk)
        except (EOFError, OSError, zlib.error) as e:
            raise ValueError(f"{path}: damaged gzip stream: {e}") from e
    return h.hexdigest()


def verify(path, expected_md5=None):
    """Check that the uncompressed bytes of ``path`` have md5 ``expected_md5`` (hex string).

    With ``expected_md5=None`` the sum is looked up in ``MNIST_MD5`` by file name (the ``.gz``
    name; an uncompressed copy, without ``.gz``, is looked up as ``name + ".gz"``).

    Returns the actual md5 (hex) when it matches. Raises ``ValueError`` naming the file, the
    expected and the actual sum when it does not, or when no expected sum is known.
    """
    path = os.fspath(path)
    if expected_md5 is None:
        name = os.path.basename(path)
        expected_md5 = MNIST_MD5.get(name) or MNIST_MD5.get(name + ".gz")
        if expected_md5 is None:
            raise ValueError(f"{path}: no expected md5 given and {name!r} is not in MNIST_MD5 "
                             f"(known: {', '.join(MNIST_MD5)})")
    actual = md5_of_uncompressed(path)
    if actual != expected_md5.lower():
        raise ValueError(f"{path}: md5 mismatch of the uncompressed bytes: expected "
                         f"{expected_md5}, found {actual} (corrupt or different file)")
    return actual
