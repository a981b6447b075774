# GENERATED from minitorch/data/sales.py by tools/sync_phases.py (phase 07 snapshot): edit the source and re-run, not this file.
# phase: 04
"""The retail sales table of phase 04: loading it, generating a synthetic stand-in, and features.

The format
----------
``sales.tsv`` is tab-separated text, UTF-8, **no header**, one sale per line, 10 fields:

====  ============  =======================================  =====================================
 #    column        file text                                DataFrame dtype
====  ============  =======================================  =====================================
 1    product_name  ``Ruby Viet Rice 5 % Broken 22.5Kg``     string (``str``; ``object`` in pandas 2)
 2    product_code  ``TY00015``                              string
 3    date          ``2020-04-11``                           ``datetime64[ns]`` (midnight)
 4    timestamp     ``2020-04-11 10:42:07.513``              ``datetime64[ns]`` (same day as date)
 5    quantity      ``2.0`` or ``0.35`` (kg for loose goods)  ``float64``
 6    unit_price    ``5650.0`` (LKR per unit or per kg)      ``float64``
 7    category      ``Rice``                                 string
 8    user          ``ADMIN``                                string
 9    total_price   ``10735.0`` (LKR; the regression target)  ``float64``
 10   id            ``1``                                    ``int64``
====  ============  =======================================  =====================================

The data set: yours, or a synthetic stand-in
--------------------------------------------
The table the course was designed around (~366K sales of a shop over a year) is **private** and is
not distributed. :func:`load_sales` therefore looks, under the repository root, for

1. ``data/sales.tsv``, then ``data/sales.tsv.gz``: a copy of the original (or any table in the same
   format) that you put there yourself; it is used as it is;
2. otherwise ``data/sales.synthetic.tsv.gz``: a **synthetic** table of the same format and size,
   made by :func:`generate_sales` (seeded, so identical on every machine with the same NumPy) on
   first use and cached there (git ignores it). Results on it are not results on real sales.

The synthetic table, and what a model can learn from it
--------------------------------------------------------
:func:`generate_sales` draws a catalogue of products (name, code, unit price) in the 16
:data:`CATEGORIES`, then sales over one year: days (busier on weekends, before the April New Year and
in December), times of day (morning and evening peaks), products (a few popular ones per category),
quantities (mostly 1-3 packs, sometimes bulk orders; loose rice, sugar, pulses, vegetables and
fruits are weighed: fractional kg), the till's user (by shift), and sequential ids in time order.

The total is ``round(quantity * unit_price * discount_factor, 2)`` (LKR, 2 decimals). The factor
is 1 except for two kinds of discount that depend on columns other than quantity and unit price,
so a model given category and day-of-year features can beat one given quantity and unit price
alone. Category promotions (:data:`PROMOTIONS`): the category is X % off on the days of a window
of the year (month-day windows, the same in any year; windows of one category do not overlap):

* Rice 12 % 1-20 Apr (the New Year) and 8 % 15-31 Dec; Flour 8 %, Sugar 10 %, Pulses 10 % 1-20 Apr;
* Oil 15 % 1-30 Jun and 10 % 1-14 Dec; Spices 15 % 1-31 Oct (Deepavali); Dairy 12 % 1-31 Jul;
* Beverages 15 % 1-31 Mar and 10 % 15-31 Dec; Snacks 20 % 15 Jul-15 Aug and 15 % 20-31 Dec;
* Biscuits 18 % 1-31 Dec; Canned Food 15 % 1-30 Nov; Cleaning 20 % 1-31 Jan and 20 % 1-14 Sep;
* Personal Care 10 % 1-31 May.

Bulk discounts (:data:`BULK_DISCOUNTS`): the line is X % off when its quantity reaches a threshold:
Rice from 5: 5 %, Flour from 10: 6 %, Vegetables from 5 kg: 8 %, Beverages from 12:
10 %, Canned Food from 24: 12 %, Cleaning from 6: 8 %. Bakery and Fruits have no discount.

Both kinds apply together (factors multiply: Beverages in March in a crate of 24 cost
0.85 * 0.90 = 76.5 % of the list price); a discounted line is 5-26.4 % below ``quantity *
unit_price``. About 11 % of the lines are discounted, about 3 % of the value of all sales. There
is no other noise: :func:`discount_factor` recomputes the factor of every row from category,
date and quantity. With least squares on 20K rows (80/20 split), held-out MAE is about 620 LKR on
``quantity, unit_price``, 45 on those and ``quantity*unit_price``, 30 with the per-category
products of :func:`features` ``(which="all", interactions=True)``, and 23 once the model can also
tell the month (category x month x ``quantity*unit_price``): category and date carry the rest.
"""
import csv
import gzip
import hashlib
import io
import json
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..utils.race import find_root

__all__ = ["COLUMNS", "CATEGORIES", "PROMOTIONS", "BULK_DISCOUNTS", "N_ROWS", "SEED", "YEAR",
           "MalformedLinesWarning", "load_sales", "generate_sales", "write_sales", "sales_path",
           "synthetic_path", "default_root", "discount_factor", "day_of_year", "category_order",
           "one_hot_category", "features"]

COLUMNS = ("product_name", "product_code", "date", "timestamp", "quantity", "unit_price", "category",
           "user", "total_price", "id")
"""The 10 fields of a line, in file order (the file has no header)."""

_STRING_COLUMNS = ("product_name", "product_code", "category", "user")
_FLOAT_COLUMNS = ("quantity", "unit_price", "total_price")

CATEGORIES = ("Rice", "Flour", "Sugar", "Oil", "Spices", "Pulses", "Vegetables", "Fruits", "Dairy",
              "Beverages", "Snacks", "Biscuits", "Canned Food", "Bakery", "Cleaning", "Personal Care")
"""The 16 categories of the synthetic catalogue; also the fixed one-hot column order."""

PROMOTIONS = (
    # (category, first day "MM-DD", last day "MM-DD" (inclusive), fraction off)
    ("Rice", "04-01", "04-20", 0.12),           # Sinhala and Tamil New Year
    ("Rice", "12-15", "12-31", 0.08),
    ("Flour", "04-01", "04-20", 0.08),
    ("Sugar", "04-01", "04-20", 0.10),
    ("Oil", "06-01", "06-30", 0.15),
    ("Oil", "12-01", "12-14", 0.10),
    ("Spices", "10-01", "10-31", 0.15),         # Deepavali
    ("Pulses", "04-01", "04-20", 0.10),
    ("Dairy", "07-01", "07-31", 0.12),
    ("Beverages", "03-01", "03-31", 0.15),      # the hot season
    ("Beverages", "12-15", "12-31", 0.10),
    ("Snacks", "07-15", "08-15", 0.20),
    ("Snacks", "12-20", "12-31", 0.15),
    ("Biscuits", "12-01", "12-31", 0.18),
    ("Canned Food", "11-01", "11-30", 0.15),
    ("Cleaning", "01-01", "01-31", 0.20),
    ("Cleaning", "09-01", "09-14", 0.20),
    ("Personal Care", "05-01", "05-31", 0.10),
)
"""Category promotions of the synthetic data: the category is that fraction off on those days."""

BULK_DISCOUNTS = (
    # (category, quantity threshold (>=), fraction off)
    ("Rice", 5.0, 0.05),
    ("Flour", 10.0, 0.06),
    ("Vegetables", 5.0, 0.08),                  # kg
    ("Beverages", 12.0, 0.10),
    ("Canned Food", 24.0, 0.12),
    ("Cleaning", 6.0, 0.08),
)
"""Bulk discounts of the synthetic data: the line is that fraction off from that quantity on."""

N_ROWS = 366_000
"""Rows of the default synthetic table (the size of the original)."""
SEED = 0
"""Seed of the default synthetic table."""
YEAR = 2020
"""Year of the default synthetic table (a leap year: 366 days)."""
GENERATOR_VERSION = 1
"""Bumped whenever :func:`generate_sales` changes its output; stale caches are then regenerated."""


class MalformedLinesWarning(UserWarning):
    """:func:`load_sales` skipped malformed lines (``on_bad_lines="warn"``)."""


# --------------------------------------------------------------------------------------------------
# where the data lives

def default_root():
    """The repository root: the first folder above this file holding ``pyproject.toml``, else cwd.

    Found from this file, so the phase snapshots (``phases/04_sales/minitorch/...``) share the
    repository's ``data/`` folder.
    """
    return find_root(Path(__file__).resolve().parent) or Path.cwd()


def _data_dir(root):
    return Path(default_root() if root is None else root) / "data"


def synthetic_path(root=None, n_rows=N_ROWS, seed=SEED, year=YEAR):
    """Where the synthetic table of these parameters is cached: ``<root>/data/sales.synthetic.tsv.gz``
    for the defaults, ``sales.synthetic-n{n_rows}-s{seed}-y{year}.tsv.gz`` otherwise."""
    if (n_rows, seed, year) == (N_ROWS, SEED, YEAR):
        name = "sales.synthetic.tsv.gz"
    else:
        name = f"sales.synthetic-n{int(n_rows)}-s{int(seed)}-y{int(year)}.tsv.gz"
    return _data_dir(root) / name


def sales_path(root=None, *, n_rows=N_ROWS, seed=SEED, year=YEAR, generate=True):
    """The file :func:`load_sales` reads when given no path (a :class:`pathlib.Path`).

    ``<root>/data/sales.tsv`` if it exists, else ``<root>/data/sales.tsv.gz``, else the synthetic
    cache :func:`synthetic_path` ``(root, n_rows, seed, year)``, which is generated (a few seconds
    for the default 366K rows) if it is missing or was made by another generator version, unless
    ``generate=False``. ``root`` defaults to :func:`default_root`.
    """
    data = _data_dir(root)
    for name in ("sales.tsv", "sales.tsv.gz"):
        if (data / name).is_file():
            return data / name
    path = synthetic_path(root, n_rows, seed, year)
    if generate and not _cache_is_fresh(path, n_rows, seed, year):
        generate_sales(n_rows, seed=seed, year=year, path=path)
    return path


def _meta(n_rows, seed, year):
    return {"generator_version": GENERATOR_VERSION, "n_rows": int(n_rows), "seed": int(seed),
            "year": int(year)}


def _meta_path(path):
    return path.with_name(path.name + ".json")


def _cache_is_fresh(path, n_rows, seed, year):
    try:
        meta = json.loads(_meta_path(path).read_text())
        data = path.read_bytes()
    except (OSError, ValueError):
        return False
    return meta == {**_meta(n_rows, seed, year), "sha256": hashlib.sha256(data).hexdigest()}


def _atomic_write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------------------------------
# loading

def _open_binary(path):
    """``path`` opened for reading bytes, gunzipped if it starts with the gzip magic number."""
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _blocks(f, block_bytes):
    """Yield the bytes of ``f`` as blocks of whole lines, about ``block_bytes`` each.

    Every line of a block ends in a newline byte (one is added to a last line without), CR LF
    line ends become LF, and a UTF-8 byte order mark at the start of the file is dropped.
    """
    carry, at_start = b"", True
    while True:
        data = f.read(block_bytes)
        buf = carry + data
        if at_start and (len(buf) >= 3 or not data):
            at_start = False
            if buf.startswith(b"\xef\xbb\xbf"):
                buf = buf[3:]
        if not data:
            if buf:
                yield (buf if buf.endswith(b"\n") else buf + b"\n").replace(b"\r\n", b"\n")
            return
        cut = buf.rfind(b"\n") + 1 if not at_start else 0
        carry = buf[cut:]
        if cut:
            yield buf[:cut].replace(b"\r\n", b"\n")


def _parse_floats(texts):
    """float64 [N] parsed as Python's float() does, and a bool [N] mask of the bad (non-finite)."""
    try:
        values = np.array(texts, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        values = np.array([_float_or_nan(t) for t in texts], dtype=np.float64)
    return values, ~np.isfinite(values)


def _float_or_nan(text):
    try:
        return float(text)
    except (ValueError, TypeError, OverflowError):
        return np.nan


def _parse_ints(texts):
    """int64 [N] (integers, or numbers with an integral value), and a bool [N] mask of the bad."""
    try:
        return np.array(texts, dtype=np.int64), np.zeros(len(texts), dtype=bool)
    except (ValueError, TypeError, OverflowError):
        pass
    values, bad = _parse_floats(texts)
    bad |= np.abs(np.where(bad, 0.0, values)) > 2.0 ** 53
    bad[~bad] = values[~bad] != np.round(values[~bad])
    return np.where(bad, 0.0, values).astype(np.int64), bad


def _parse_datetimes(texts, formats):
    """datetime64[ns] [N] in the first of ``formats`` that parses, and a bool [N] mask of the bad."""
    values = np.asarray(pd.to_datetime(texts, format=formats[0], errors="coerce"), dtype="datetime64[ns]")
    for fmt in formats[1:]:
        bad = np.isnat(values)
        if not bad.any():
            break
        values[bad] = np.asarray(pd.to_datetime(texts[bad], format=fmt, errors="coerce"),
                                 dtype="datetime64[ns]")
    return values, np.isnat(values)


_EXPECT = {
    "quantity": "a finite number", "unit_price": "a finite number", "total_price": "a finite number",
    "date": "a date YYYY-MM-DD", "timestamp": "a time YYYY-MM-DD HH:MM:SS.fff", "id": "an integer",
}


def _parse_block(buf, first_line, encoding):
    """Split and type one block of whole lines.

    Returns (dict of column arrays for the good lines, list of (line number, reason) for the bad,
    number of lines in the block). Splitting is vectorised: the tabs of each line are counted with
    NumPy, the lines with exactly 9 go to pandas' C reader as text (``dtype=object``), and the
    numbers and dates are parsed column by column.
    """
    a = np.frombuffer(buf, dtype=np.uint8)
    ends = np.flatnonzero(a == 10)                                       # one \n per line
    n = len(ends)
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    n_tabs = np.bincount(np.searchsorted(ends, np.flatnonzero(a == 9)), minlength=n)
    ok = n_tabs == len(COLUMNS) - 1
    bad = {}
    for i in np.flatnonzero(~ok):
        got = 0 if ends[i] == starts[i] else n_tabs[i] + 1
        bad[first_line + int(i)] = (f"expected {len(COLUMNS)} tab-separated fields "
                                    f"({', '.join(COLUMNS)}), got {got}")
    while True:                                                          # drop undecodable lines
        good = buf if ok.all() else a[np.repeat(ok, ends - starts + 1)].tobytes()
        try:
            good.decode(encoding)
            break
        except UnicodeDecodeError as whole:
            n_bad = len(bad)
            for i in np.flatnonzero(ok):
                try:
                    buf[starts[i]:ends[i]].decode(encoding)
                except UnicodeDecodeError as e:
                    ok[i] = False
                    bad[first_line + int(i)] = f"not {encoding} text (byte {e.start + 1}: {e.reason})"
            if len(bad) == n_bad:                                        # not line by line
                raise ValueError(f"lines {first_line}-{first_line + n - 1}: not {encoding} text") from whole
    row_lines = first_line + np.flatnonzero(ok)
    if len(row_lines):
        table = pd.read_csv(io.BytesIO(good), sep="\t", header=None, names=list(COLUMNS), dtype=object,
                            na_filter=False, quoting=csv.QUOTE_NONE, lineterminator="\n",
                            skip_blank_lines=False, encoding=encoding, engine="c")
        if len(table) != len(row_lines):                                 # cannot happen: a guard
            raise RuntimeError(f"pandas read {len(table)} rows from {len(row_lines)} lines")
        texts = {c: table[c].to_numpy(dtype=object) for c in COLUMNS}
    else:
        texts = {c: np.empty(0, dtype=object) for c in COLUMNS}

    cols, problems = {c: texts[c] for c in _STRING_COLUMNS}, {}
    for c in _FLOAT_COLUMNS:
        cols[c], problems[c] = _parse_floats(texts[c])
    cols["date"], problems["date"] = _parse_datetimes(texts["date"], ["%Y-%m-%d"])
    cols["timestamp"], problems["timestamp"] = _parse_datetimes(
        texts["timestamp"], ["%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"])
    cols["id"], problems["id"] = _parse_ints(texts["id"])

    row_bad = np.logical_or.reduce(list(problems.values()))
    for r in np.flatnonzero(row_bad):
        reason = "; ".join(f"{c}: expected {_EXPECT[c]}, got {texts[c][r]!r}"
                           for c, p in problems.items() if p[r])
        if row_lines[r] == 1 and [texts[c][r].strip().lower() for c in COLUMNS] == list(COLUMNS):
            reason += " (this looks like a header line; the format has none)"
        bad[int(row_lines[r])] = reason
    cols = {c: v[~row_bad] for c, v in cols.items()}
    return cols, sorted(bad.items()), n


_STR = pd.Series(["x"]).dtype        # pandas' default string dtype: str (pandas 3), object (pandas 2)


def _frame(cols):
    df = pd.DataFrame({c: cols[c] for c in COLUMNS})
    return df.astype({**dict.fromkeys(_STRING_COLUMNS, _STR), **dict.fromkeys(_FLOAT_COLUMNS, "float64"),
                      "date": "datetime64[ns]", "timestamp": "datetime64[ns]", "id": "int64"})


def load_sales(path=None, on_bad_lines="warn", *, root=None, n_rows=N_ROWS, seed=SEED, year=YEAR,
               block_bytes=1 << 22, encoding="utf-8", max_reported=5):
    """Read a sales table (the format in this module's docstring) into a DataFrame.

    The file is streamed in blocks of whole lines (``block_bytes``, 4 MiB); each block is split
    with NumPy and pandas' C reader, so 366K lines take about a second.

    Args:
        path: a ``.tsv`` file, plain or gzipped (recognised by its content, not its name). ``None``:
            :func:`sales_path` ``(root, ...)``: your ``data/sales.tsv`` or ``data/sales.tsv.gz`` if
            present, else the **synthetic** table (generated and cached on first use; the original
            is private, see the module docstring).
        on_bad_lines: what to do with malformed lines: not exactly 10 tab-separated fields (blank
            lines included), a number that Python's ``float()`` does not read or that is not
            finite, an id that is not an integer, a date not ``YYYY-MM-DD``, a timestamp not
            ``YYYY-MM-DD HH:MM:SS[.fff]``, bytes that are not ``encoding`` text. ``"error"``:
            raise :class:`ValueError` naming ``file:line`` of the first, what was expected and
            what was there, and how many malformed lines the file has. ``"warn"``: skip them and
            warn (:class:`MalformedLinesWarning`) with their count and the ``file:line: reason``
            of the first ``max_reported``. Lines are never dropped silently.
        root: repository root holding ``data/`` (default :func:`default_root`); used only when
            ``path`` is None.
        n_rows, seed, year: parameters of the synthetic table, used only when ``path`` is None and
            no file of yours is present.
        block_bytes: bytes read at a time (bounds the memory of the raw text).
        encoding: text encoding of the file; one where tab and newline are single bytes
            (UTF-8, Latin-1, cp1252...).
        max_reported: how many malformed lines the warning lists.

    Returns:
        DataFrame of N rows (one per good line, in file order, index 0..N-1) and the columns
        :data:`COLUMNS`, with the dtypes of the module docstring; string fields are kept exactly as
        in the file. ``df.attrs`` holds ``"source"`` (the path read, a str) and ``"n_malformed"``
        (the number of lines skipped).

    Raises:
        ValueError: ``on_bad_lines`` is neither ``"warn"`` nor ``"error"``, or it is ``"error"``
            and a line is malformed.
        FileNotFoundError: ``path`` does not exist.
    """
    if on_bad_lines not in ("warn", "error"):
        raise ValueError(f"on_bad_lines must be 'warn' or 'error', got {on_bad_lines!r}")
    if path is None:
        path = sales_path(root, n_rows=n_rows, seed=seed, year=year)
    path = Path(path)
    parts, bad, n_lines = [], [], 0
    with _open_binary(path) as f:
        for buf in _blocks(f, int(block_bytes)):
            cols, bad_block, n = _parse_block(buf, n_lines + 1, encoding)
            parts.append(cols)
            bad.extend(bad_block)
            n_lines += n
    if bad:
        if on_bad_lines == "error":
            line, reason = bad[0]
            raise ValueError(f"{path}:{line}: malformed line: {reason} "
                             f"({len(bad)} malformed line(s) of {n_lines} in the file; "
                             f"on_bad_lines='warn' skips them with a warning)")
        listed = "; ".join(f"{path}:{line}: {reason}" for line, reason in bad[:max_reported])
        more = f"; ... and {len(bad) - max_reported} more" if len(bad) > max_reported else ""
        warnings.warn(f"{path}: skipped {len(bad)} malformed line(s) of {n_lines}: {listed}{more}",
                      MalformedLinesWarning, stacklevel=2)
    if parts:
        cols = {c: np.concatenate([p[c] for p in parts]) for c in COLUMNS}
    else:
        cols = {c: np.empty(0, dtype=object) for c in COLUMNS}
    df = _frame(cols)
    df.attrs = {"source": str(path), "n_malformed": len(bad)}
    return df


# --------------------------------------------------------------------------------------------------
# the synthetic table

_KG = "Kg"
# category: (share of sales, brands ("" = none), [(item, LKR per kg or l, pack sizes or None =
# loose, weighed in kg[, unit if not the category's])], unit of the sizes, (chance of a bulk order,
# bulk quantities, or "lo-hi" kg for weighed goods))
_CATALOGUE = {
    "Rice": (0.09, ["Ruby", "Araliya", "Nipuna", "Keeri", "Hiru"],
             [("Viet Rice 5 % Broken", 98, [5, 10, 22.5, 25]), ("Samba Rice", 118, [1, 5, 10, 25]),
              ("Keeri Samba", 195, [1, 5, 10]), ("Red Raw Rice", 108, [1, 5, 10, 25]),
              ("Nadu Rice", 100, [1, 5, 10, 25]), ("Basmati Rice", 460, [1, 2, 5]),
              ("Nadu Rice Loose", 98, None), ("Samba Rice Loose", 115, None)], _KG,
             (0.12, [5, 10, 20])),
    "Flour": (0.04, ["Prima", "Seeds", "Harischandra"],
              [("Wheat Flour", 105, [1, 2, 5, 25]), ("Atta Flour", 150, [1, 2]),
               ("Rice Flour Red", 190, [0.4, 1]), ("Self Raising Flour", 210, [0.5, 1])], _KG,
              (0.10, [5, 10, 20])),
    "Sugar": (0.04, ["Pelwatte", "Lanka Sugar", ""],
              [("White Sugar", 105, [1, 5, 50]), ("Brown Sugar", 140, [0.5, 1]),
               ("White Sugar Loose", 100, None), ("Sugar Candy", 520, [0.25])], _KG,
              (0.10, [5, 10])),
    "Oil": (0.04, ["Fortune", "Marina", "Turkey", "Ayush"],
            [("Coconut Oil", 480, [0.5, 1, 4]), ("Vegetable Oil", 410, [0.5, 1, 2, 5]),
             ("Sunflower Oil", 620, [1, 2]), ("Sesame Oil", 980, [0.375])], "L",
            (0.05, [5, 6, 10])),
    "Spices": (0.07, ["MA's", "Motha", "Larich", "Ruhunu"],
               [("Chilli Powder", 900, [0.05, 0.1, 0.25]), ("Curry Powder", 1100, [0.05, 0.1, 0.25]),
                ("Turmeric Powder", 1500, [0.05, 0.1]), ("Pepper Whole", 1800, [0.05, 0.1]),
                ("Cinnamon Sticks", 3800, [0.025, 0.05]), ("Cardamom", 9000, [0.025]),
                ("Dry Chillies Loose", 780, None)], _KG, (0.04, [5, 6, 10, 12])),
    "Pulses": (0.05, ["Wijaya", "Harischandra", ""],
               [("Red Dhal", 190, [0.5, 1]), ("Green Gram", 390, [0.5, 1]),
                ("Chickpeas", 260, [0.5, 1]), ("Cowpea", 340, [0.5]), ("Red Dhal Loose", 180, None),
                ("Soya Meat", 560, [0.09])], _KG, (0.05, [5, 10])),
    "Vegetables": (0.14, [""],
                   [("Big Onion", 150, None), ("Red Onion", 260, None), ("Potato", 170, None),
                    ("Carrot", 220, None), ("Leeks", 180, None), ("Beans", 260, None),
                    ("Tomato", 200, None), ("Cabbage", 120, None), ("Pumpkin", 90, None),
                    ("Brinjal", 160, None), ("Green Chillies", 420, None), ("Garlic", 480, None),
                    ("Ginger", 560, None), ("Lime", 400, None)], _KG, (0.10, "5-20")),
    "Fruits": (0.07, [""],
               [("Banana Ambul", 120, None), ("Papaya", 110, None), ("Pineapple", 150, None),
                ("Apple Imported", 720, None), ("Orange Imported", 650, None), ("Mango", 300, None),
                ("Grapes", 1200, None)], _KG, (0.04, "5-10")),
    "Dairy": (0.07, ["Anchor", "Highland", "Pelwatte", "Kotmale", "Ratthi"],
              [("Full Cream Milk Powder", 1150, [0.4, 1]), ("Fresh Milk", 320, [1]),
               ("Set Yoghurt", 700, [0.08]), ("Butter", 1900, [0.2]), ("Cheese Slices", 2600, [0.2])],
              _KG, (0.04, [5, 6, 10, 12])),
    "Beverages": (0.08, ["Elephant House", "Coca-Cola", "Dilmah", "Nescafe", "Milo"],
                  [("Ginger Beer", 230, [0.4, 1.5]), ("Cream Soda", 210, [0.4, 1.5]),
                   ("Cola", 200, [0.4, 1.5]), ("Ceylon Tea", 2100, [0.1, 0.2, 0.4], _KG),
                   ("Instant Coffee", 6500, [0.05, 0.1], _KG), ("Malted Drink", 1900, [0.4], _KG),
                   ("Drinking Water", 70, [0.5, 1.5, 5])], "L", (0.15, [6, 12, 24])),
    "Snacks": (0.07, ["Tiara", "Maliban", "Ritz", "Kist", "Lays"],
               [("Potato Chips", 1700, [0.045, 0.1]), ("Mixture", 900, [0.1, 0.2]),
                ("Cashew Roasted", 4800, [0.05, 0.1]), ("Chocolate Bar", 4000, [0.045, 0.1]),
                ("Peanuts Salted", 1300, [0.1])], _KG, (0.04, [5, 6, 10, 12])),
    "Biscuits": (0.06, ["Maliban", "Munchee", "Ritz", "Uswatte"],
                 [("Cream Crackers", 650, [0.19, 0.49]), ("Marie Biscuits", 600, [0.08, 0.35]),
                  ("Chocolate Cream Biscuits", 1000, [0.1, 0.2]), ("Lemon Puff", 850, [0.2]),
                  ("Ginger Biscuits", 800, [0.17])], _KG, (0.04, [5, 6, 10, 12])),
    "Canned Food": (0.03, ["Ocean King", "MD", "Edinborough", "Lucky"],
                    [("Mackerel In Tomato Sauce", 1100, [0.155, 0.425]), ("Tuna Chunks", 2100, [0.185]),
                     ("Sweet Corn", 900, [0.4]), ("Baked Beans", 800, [0.42]),
                     ("Fruit Cocktail", 1000, [0.825])], _KG, (0.10, [12, 24, 48])),
    "Bakery": (0.05, ["Perera & Sons", "Fab", "Daily Bake"],
               [("Sandwich Bread", 340, [0.45, 0.9]), ("Roast Paan", 300, [0.25]),
                ("Butter Cake", 1400, [0.5, 1]), ("Bun", 450, [0.1]), ("Rusks", 900, [0.2])],
               _KG, (0.04, [5, 6, 10, 12])),
    "Cleaning": (0.05, ["Sunlight", "Harpic", "Vim", "Lifebuoy", "Baby Cheramy"],
                 [("Washing Powder", 580, [0.5, 1, 2]), ("Dish Wash Liquid", 520, [0.25, 0.5, 1]),
                  ("Toilet Cleaner", 850, [0.5, 1]), ("Bar Soap", 1100, [0.11, 0.15]),
                  ("Floor Cleaner", 620, [0.5, 1])], _KG, (0.10, [6, 12])),
    "Personal Care": (0.05, ["Signal", "Clogard", "Sunsilk", "Lux", "Kumarika", "Velvet"],
                      [("Toothpaste", 2400, [0.07, 0.12]), ("Shampoo", 1900, [0.08, 0.18, 0.4]),
                       ("Beauty Soap", 1300, [0.07, 0.1]), ("Hair Oil", 1600, [0.1, 0.2]),
                       ("Talcum Powder", 1200, [0.1, 0.2])], _KG, (0.04, [5, 6, 10, 12])),
}
assert tuple(_CATALOGUE) == CATEGORIES
_USERS = ("ADMIN", "CASHIER1", "CASHIER2", "CASHIER3", "MANAGER")


def _size_text(size, unit):
    if unit == "L" and size < 1:
        return f"{size * 1000:g}ml"
    if unit == _KG and size < 1:
        return f"{size * 1000:g}g"
    return f"{size:g}{unit}"


def _catalogue(rng):
    """Products as parallel arrays: name, code, unit price, category index, loose?, popularity."""
    names, prices, cats, loose, weights, brands_of = [], [], [], [], [], []
    for ci, (category, (share, brands, items, unit, _bulk)) in enumerate(_CATALOGUE.items()):
        first = len(names)
        for item, per_unit, sizes, *item_unit in items:
            n_brands = min(len(brands), int(rng.integers(1, 4)))
            for brand in rng.choice(brands, size=n_brands, replace=False):
                factor = float(np.exp(rng.normal(0.0, 0.12)))
                label = f"{brand} {item}".strip()
                for size in ([None] if sizes is None else sizes):
                    if size is None:
                        names.append(f"{label} 1Kg")
                        price = per_unit * factor
                        price = round(price / 10) * 10.0
                    else:
                        names.append(f"{label} {_size_text(size, (item_unit or [unit])[0])}")
                        price = per_unit * factor * size ** 0.95
                        price = max(round(price / 5) * 5.0, 5.0)
                    prices.append(price)
                    cats.append(ci)
                    loose.append(size is None)
                    brands_of.append(brand)
        n = len(names) - first
        popularity = 1.0 / np.arange(1, n + 1) ** 0.9
        weights.extend(share * rng.permutation(popularity) / popularity.sum())
    # codes: a two-letter supplier prefix per brand, numbered in catalogue order
    prefixes, counters, codes = {}, {}, []
    letters = np.array(list("ABCDEFGHKLMNPRSTWY"))
    for brand in brands_of:
        if brand not in prefixes:
            while True:
                p = "".join(rng.choice(letters, 2))
                if p not in prefixes.values():
                    prefixes[brand] = p
                    break
        counters[brand] = counters.get(brand, 0) + 1
        codes.append(f"{prefixes[brand]}{counters[brand]:05d}")
    return (np.array(names), np.array(codes), np.array(prices), np.array(cats, dtype=np.int64),
            np.array(loose), np.array(weights) / np.sum(weights))


def _month_day(dates):
    """Month * 100 + day (int64 [N]) of datetime64 values."""
    idx = pd.DatetimeIndex(dates)
    return idx.month.to_numpy(np.int64) * 100 + idx.day.to_numpy(np.int64)


def _md(text):
    month, day = text.split("-")
    return int(month) * 100 + int(day)


def _discounts(cat_codes, month_day, quantity):
    factor = np.ones(len(cat_codes))
    index = {c: i for i, c in enumerate(CATEGORIES)}
    for category, first, last, off in PROMOTIONS:
        hit = (cat_codes == index[category]) & (month_day >= _md(first)) & (month_day <= _md(last))
        factor[hit] *= 1.0 - off
    for category, threshold, off in BULK_DISCOUNTS:
        hit = (cat_codes == index[category]) & (quantity >= threshold)
        factor[hit] *= 1.0 - off
    return factor


def _codes(values, categories):
    """int64 [N]: the position of each value in ``categories``, -1 if absent."""
    index = pd.Index(list(categories), dtype=object)
    return index.get_indexer(np.asarray(values, dtype=object)).astype(np.int64)


def discount_factor(df):
    """The synthetic data's price multiplier of each row (float64 [N], in (0, 1]).

    ``total_price == round(quantity * unit_price * discount_factor(df), 2)`` on every row of
    :func:`generate_sales`: :data:`PROMOTIONS` (by category and the month-day of ``date``) times
    :data:`BULK_DISCOUNTS` (by category and ``quantity``). Rows of other categories get 1.
    """
    codes = _codes(df["category"], CATEGORIES)
    return _discounts(codes, _month_day(df["date"]), df["quantity"].to_numpy(np.float64))


def generate_sales(n_rows=N_ROWS, seed=SEED, *, year=YEAR, path=None):
    """A **synthetic** sales table: the original is private, this one has its format and size.

    What is drawn, and the discounts that make ``total_price`` differ from ``quantity *
    unit_price``, are described in the module docstring (:data:`PROMOTIONS`,
    :data:`BULK_DISCOUNTS`, :func:`discount_factor`). Vectorised NumPy: about 0.5 s for 366K
    rows, plus about 2 s to write them gzipped.

    Args:
        n_rows: number of sales (int >= 0).
        seed: seed of the NumPy PCG64 generator everything is drawn from. The same
            (n_rows, seed, year) gives the same table, and the same file bytes, on every run with
            the same NumPy version; different seeds give different tables.
        year: the calendar year the sales are spread over (every day of it).
        path: if given, also write the table there with :func:`write_sales` (gzipped if the name
            ends in ``.gz``), with a ``.json`` sidecar recording the parameters for the cache check
            of :func:`sales_path`.

    Returns:
        DataFrame like :func:`load_sales` returns (columns :data:`COLUMNS`), rows in time order,
        ``id`` 1..n_rows. Writing it and loading the file gives an equal frame.
    """
    n = int(n_rows)
    if n < 0:
        raise ValueError(f"n_rows must be >= 0, got {n_rows}")
    rng = np.random.default_rng(seed)
    names, codes, prices, prod_cat, loose, weights = _catalogue(rng)

    # days: weekends, the April New Year and December are busier
    days = np.arange(np.datetime64(f"{year}-01-01"), np.datetime64(f"{year + 1}-01-01"))
    md = _month_day(days)
    weekday = (days.astype(np.int64) + 3) % 7                       # 0 = Monday
    busy = 1.0 + 0.3 * (weekday >= 5) + 0.4 * ((md >= 401) & (md <= 413)) + 0.3 * (md >= 1210)
    busy *= np.exp(rng.normal(0.0, 0.08, len(days)))
    day = rng.choice(len(days), size=n, p=busy / busy.sum())

    # times of day: a morning and an evening peak, shop open 08:00-22:00
    evening = rng.random(n) < 0.55
    hours = np.where(evening, rng.normal(18.0, 1.8, n), rng.normal(10.5, 1.5, n))
    closed = (hours < 8.0) | (hours >= 22.0)
    hours[closed] = rng.uniform(8.0, 22.0, int(closed.sum()))
    ms = np.minimum(np.floor(hours * 3_600_000), 22 * 3_600_000 - 1).astype(np.int64)
    stamp = days[day].astype("datetime64[ms]") + ms.astype("timedelta64[ms]")
    order = np.argsort(stamp, kind="stable")
    day, stamp, evening = day[order], stamp[order], evening[order]

    # products, quantities
    product = rng.choice(len(names), size=n, p=weights)
    cat = prod_cat[product]
    is_loose = loose[product]
    quantity = rng.geometric(0.55, n).astype(np.float64)            # packs: 1, 2, 3, ...
    weighed = np.clip(np.exp(rng.normal(np.log(0.8), 0.7, n)), 0.05, 4.999)
    quantity = np.where(is_loose, np.round(weighed, 3), quantity)
    bulk_draw = rng.random(n)
    bulk_pick = rng.random(n)
    bulk_kg = rng.random(n)
    for ci, (_share, _brands, _items, _unit, (chance, values)) in enumerate(_CATALOGUE.values()):
        rows = (cat == ci) & (bulk_draw < chance)
        if isinstance(values, str):                               # weighed: uniform kg range
            lo, hi = (float(v) for v in values.split("-"))
            quantity[rows] = np.round(lo + (hi - lo) * bulk_kg[rows], 3)
        else:
            values = np.asarray(values, dtype=np.float64)
            quantity[rows] = values[(bulk_pick[rows] * len(values)).astype(np.int64)]

    unit_price = prices[product]
    total = np.round(quantity * unit_price * _discounts(cat, md[day], quantity), 2)

    # the till's user: by shift, with the admin and the manager now and then
    u = rng.random(n)
    user = np.where(evening, np.where(u < 0.7, 2, 3), np.where(u < 0.7, 1, 3))
    other = rng.random(n)
    user = np.where(other < 0.08, 0, np.where(other < 0.12, 4, user))

    cols = {
        "product_name": names[product].astype(object), "product_code": codes[product].astype(object),
        "date": days[day].astype("datetime64[ns]"), "timestamp": stamp.astype("datetime64[ns]"),
        "quantity": quantity, "unit_price": unit_price,
        "category": np.array(CATEGORIES, dtype=object)[cat],
        "user": np.array(_USERS, dtype=object)[user], "total_price": total,
        "id": np.arange(1, n + 1, dtype=np.int64),
    }
    df = _frame(cols)
    if path is not None:
        path = Path(path)
        data = write_sales(df, path)
        meta = {**_meta(n, seed, year), "sha256": hashlib.sha256(data).hexdigest()}
        _atomic_write(_meta_path(path), json.dumps(meta, indent=1).encode())
    return df


def _to_text(df):
    """The TSV bytes of a frame with the columns COLUMNS."""
    n = len(df)
    if n == 0:
        return b""
    date = np.datetime_as_string(df["date"].to_numpy().astype("datetime64[D]"))
    stamp = np.ascontiguousarray(np.datetime_as_string(
        df["timestamp"].to_numpy().astype("datetime64[ms]"), unit="ms"))
    stamp.view(np.uint32).reshape(n, -1)[:, 10] = ord(" ")            # ISO 'T' -> ' '
    fields = []
    for c in COLUMNS:
        if c == "date":
            fields.append(date.tolist())
        elif c == "timestamp":
            fields.append(stamp.tolist())
        elif c in _FLOAT_COLUMNS:
            values = df[c].to_numpy(np.float64)
            if not np.isfinite(values).all():
                raise ValueError(f"column {c!r} holds a NaN or an infinity: not a valid sales line")
            fields.append(list(map(repr, values.tolist())))             # shortest exact form
        elif c == "id":
            fields.append(list(map(str, df[c].to_numpy(np.int64).tolist())))
        else:
            fields.append(list(map(str, df[c].tolist())))
    text = "\n".join(map("\t".join, zip(*fields))) + "\n"
    if text.count("\t") != 9 * n or text.count("\n") != n or "\r" in text:
        raise ValueError("a string field holds a tab or a line break: cannot be written as TSV")
    return text.encode("utf-8")


def write_sales(df, path):
    """Write a frame with the columns :data:`COLUMNS` as a sales TSV (the module's format).

    Gzipped (level 1, fast, no timestamp or name in the header, so the bytes are reproducible) if
    ``path`` ends in ``.gz``. Numbers are written in the shortest form that reads back exactly;
    times to the millisecond. Written to a temporary file and renamed, so readers never see half a
    file. Returns the bytes written.

    Raises:
        ValueError: a string field holds a tab or line break, or a number is NaN or infinite.
    """
    path = Path(path)
    data = _to_text(df)
    if path.name.endswith(".gz"):
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=1, mtime=0) as gz:
            gz.write(data)
        data = buf.getvalue()
    _atomic_write(path, data)
    return data


# --------------------------------------------------------------------------------------------------
# features

def day_of_year(dates):
    """Day of the year, 1..366 (``int64 [N]``).

    ``dates``: a DataFrame (its ``date`` column), a Series or Index of datetimes, or a
    ``datetime64`` array of shape [N].
    """
    if isinstance(dates, pd.DataFrame):
        dates = dates["date"]
    return pd.DatetimeIndex(np.asarray(dates, dtype="datetime64[ns]")).day_of_year.to_numpy(np.int64)


def category_order(values):
    """The fixed one-hot column order for these category values (a tuple of str).

    :data:`CATEGORIES` (all 16, present or not) if every value is one of them, as in the synthetic
    table; otherwise (your own data) the distinct values, sorted. Encode subsets of one data set
    (train / test) with the order of the whole set: ``categories=category_order(df["category"])``.
    """
    present = set(pd.unique(np.asarray(values, dtype=object)))
    if present <= set(CATEGORIES):
        return CATEGORIES
    return tuple(sorted(str(v) for v in present))


def one_hot_category(values, categories=None):
    """One-hot encoding of categories: ``float32 [N, C]``, column j is 1 where value == categories[j].

    ``values``: a DataFrame (its ``category`` column) or a sequence of N str. ``categories``: the
    column order (default :func:`category_order` of ``values``).

    Raises:
        ValueError: a value is not in ``categories`` (the message lists them).
    """
    if isinstance(values, pd.DataFrame):
        values = values["category"]
    values = np.asarray(values, dtype=object)
    categories = category_order(values) if categories is None else tuple(categories)
    codes = _codes(values, categories)
    if (codes < 0).any():
        unknown = sorted(set(map(str, values[codes < 0])))
        raise ValueError(f"categories not in the given order: {unknown[:10]} "
                         f"(known: {list(categories)})")
    out = np.zeros((len(values), len(categories)), dtype=np.float32)
    out[np.arange(len(values)), codes] = 1.0
    return out


def features(df, which="basic", *, categories=None, interactions=False):
    """Model inputs and target of a sales frame, as NumPy arrays (no scaling).

    Args:
        df: a frame from :func:`load_sales` / :func:`generate_sales` (N rows).
        which: ``"basic"``: ``quantity``, ``unit_price``. ``"all"``: those, ``day_of_year``
            (1..366) and the one-hot category columns ``category=<name>``.
        categories: one-hot column order (default :func:`category_order` of ``df["category"]``).
        interactions: append ``quantity*unit_price``, and for ``"all"`` also
            ``quantity*unit_price*category=<name>`` for each category (the product times the
            one-hot): with them a linear model can fit the list price and a per-category discount.

    Returns:
        (X, y, names): ``X`` float32 [N, F], ``y`` = ``total_price`` float32 [N], ``names`` the F
        column names (list of str). Units: quantity in units or kg, prices in LKR, day 1..366.

    Raises:
        ValueError: ``which`` is neither ``"basic"`` nor ``"all"``; a category is unknown.
    """
    if which not in ("basic", "all"):
        raise ValueError(f"which must be 'basic' or 'all', got {which!r}")
    q = df["quantity"].to_numpy(np.float64)
    p = df["unit_price"].to_numpy(np.float64)
    blocks, names = [q[:, None], p[:, None]], ["quantity", "unit_price"]
    if which == "all":
        categories = category_order(df["category"]) if categories is None else tuple(categories)
        onehot = one_hot_category(df["category"], categories)
        blocks += [day_of_year(df)[:, None].astype(np.float64), onehot]
        names += ["day_of_year"] + [f"category={c}" for c in categories]
    if interactions:
        qp = (q * p)[:, None]
        blocks.append(qp)
        names.append("quantity*unit_price")
        if which == "all":
            blocks.append(qp * onehot)
            names += [f"quantity*unit_price*category={c}" for c in categories]
    X = np.concatenate([np.asarray(b, dtype=np.float64) for b in blocks], axis=1).astype(np.float32)
    y = df["total_price"].to_numpy(np.float32)
    return X, y, names
