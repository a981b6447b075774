"""The sales table (minitorch.data.sales): loading, malformed lines, the synthetic generator,
the cache and user-file precedence, features, and that the synthetic effects are learnable.

Everything writes under pytest's tmp_path (``root=``), never into the repository's data/.
"""
import gzip
import json
import re
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from minitorch.data import generate_sales, load_sales
from minitorch.data import sales as S
from minitorch.data.sales import (BULK_DISCOUNTS, CATEGORIES, COLUMNS, PROMOTIONS, MalformedLinesWarning,
                                  category_order, day_of_year, discount_factor, features,
                                  one_hot_category, sales_path, synthetic_path, write_sales)

GOOD = ("Ruby Viet Rice 5 % Broken 22.5Kg\tTY00015\t2020-04-11\t2020-04-11 10:42:07.513\t2.0\t5650.0\t"
        "Rice\tADMIN\t9944.0\t17")


def tsv_lines(df):
    """The lines (without \\n) that write_sales gives for df."""
    return S._to_text(df).decode().splitlines()


@pytest.fixture(scope="module")
def small():
    return generate_sales(40, seed=7)


def with_bad_lines(small):
    """(lines, {line number: expected reason fragment}): the 40 good lines with bad ones inserted."""
    good = tsv_lines(small)
    fields = good[4].split("\t")
    bad = {
        3: ("\t".join(fields[:7]), "expected 10 tab-separated fields", "got 7"),
        6: ("\t".join(fields[:4] + ["two"] + fields[5:]), "quantity: expected a finite number", "'two'"),
        10: ("\t".join(fields[:2] + ["2020-13-45"] + fields[3:]), "date: expected a date YYYY-MM-DD",
             "'2020-13-45'"),
    }
    lines = list(good)
    for line_no in sorted(bad):
        lines.insert(line_no - 1, bad[line_no][0])
    return lines, bad


def write_text(path, lines, newline="\n", final=True, gz=False):
    data = (newline.join(lines) + (newline if final else "")).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


# ---------------------------------------------------------------- the format

def test_reads_the_original_format(tmp_path):
    df = load_sales(write_text(tmp_path / "one.tsv", [GOOD]), on_bad_lines="error")
    assert list(df.columns) == list(COLUMNS)
    row = df.iloc[0]
    assert row.product_name == "Ruby Viet Rice 5 % Broken 22.5Kg" and row.product_code == "TY00015"
    assert row.date == pd.Timestamp("2020-04-11")
    assert row.timestamp == pd.Timestamp("2020-04-11 10:42:07.513")
    assert (row.quantity, row.unit_price, row.total_price, row.id) == (2.0, 5650.0, 9944.0, 17)
    assert (row.category, row.user) == ("Rice", "ADMIN")
    check_dtypes(df)
    assert df.attrs == {"source": str(tmp_path / "one.tsv"), "n_malformed": 0}


def check_dtypes(df):
    assert list(df.columns) == list(COLUMNS)
    for c in ("product_name", "product_code", "category", "user"):
        assert pd.api.types.is_string_dtype(df[c]), c
    for c in ("date", "timestamp"):
        assert df[c].dtype == np.dtype("datetime64[ns]"), c
    for c in ("quantity", "unit_price", "total_price"):
        assert df[c].dtype == np.float64, c
    assert df["id"].dtype == np.int64


def test_timestamps_without_fraction_and_crlf_and_no_final_newline(tmp_path):
    other = GOOD.replace("10:42:07.513", "10:42:07")
    df = load_sales(write_text(tmp_path / "x.tsv", [GOOD, other], newline="\r\n", final=False),
                    on_bad_lines="error")
    assert list(df.timestamp) == [pd.Timestamp("2020-04-11 10:42:07.513"),
                                  pd.Timestamp("2020-04-11 10:42:07")]
    assert df.id.tolist() == [17, 17] and df.user.tolist() == ["ADMIN", "ADMIN"]


def test_empty_file(tmp_path):
    df = load_sales(write_text(tmp_path / "empty.tsv", [], final=False), on_bad_lines="error")
    assert len(df) == 0
    check_dtypes(df)


# ---------------------------------------------------------------- malformed lines

@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_warn_skips_and_reports_file_line(tmp_path, small, gz):
    lines, bad = with_bad_lines(small)
    path = write_text(tmp_path / ("fixture.tsv.gz" if gz else "fixture.tsv"), lines, gz=gz)
    with pytest.warns(MalformedLinesWarning) as record:
        df = load_sales(path)                                     # on_bad_lines="warn" by default
    assert len(record) == 1
    message = str(record[0].message)
    assert f"skipped 3 malformed line(s) of {len(small) + 3}" in message
    for line_no, (_text, *fragments) in bad.items():
        assert f"{path}:{line_no}: " in message
        for fragment in fragments:
            assert fragment in message
    pd.testing.assert_frame_equal(df, small, check_exact=True)   # every good line, nothing else
    assert df.attrs["n_malformed"] == 3


def test_warning_lists_only_the_first_few(tmp_path, small):
    lines = tsv_lines(small)
    lines[1:1] = ["garbage"] * 8                                  # lines 2..9
    path = write_text(tmp_path / "many.tsv", lines)
    with pytest.warns(MalformedLinesWarning, match=r"skipped 8 malformed") as record:
        load_sales(path, max_reported=3)
    message = str(record[0].message)
    assert all(f"{path}:{n}: " in message for n in (2, 3, 4))
    assert f"{path}:5: " not in message and "and 5 more" in message


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_error_raises_at_the_first_bad_line(tmp_path, small, gz):
    lines, _bad = with_bad_lines(small)
    path = write_text(tmp_path / "fixture.tsv", lines, gz=gz)
    with pytest.raises(ValueError) as info:
        load_sales(path, on_bad_lines="error")
    message = str(info.value)
    assert message.startswith(f"{path}:3: ")
    assert "expected 10 tab-separated fields (product_name, product_code" in message and "got 7" in message
    assert f"3 malformed line(s) of {len(small) + 3}" in message


def corrupt(fields, column, value):
    fields = list(fields)
    fields[COLUMNS.index(column)] = value
    return "\t".join(fields)


BAD_KINDS = {
    "too many fields": (lambda f: "\t".join(f + ["extra"]), "expected 10 tab-separated fields", "got 11"),
    "blank line": (lambda f: "", "expected 10 tab-separated fields", "got 0"),
    "empty quantity": (lambda f: corrupt(f, "quantity", ""), "quantity: expected a finite number", "''"),
    "nan price": (lambda f: corrupt(f, "unit_price", "nan"), "unit_price: expected a finite number", "'nan'"),
    "comma total": (lambda f: corrupt(f, "total_price", "1,200.50"), "total_price: expected", "'1,200.50'"),
    "float id": (lambda f: corrupt(f, "id", "12.5"), "id: expected an integer", "'12.5'"),
    "word id": (lambda f: corrupt(f, "id", "abc"), "id: expected an integer", "'abc'"),
    "bad timestamp": (lambda f: corrupt(f, "timestamp", "2020-04-11 25:00:00.000"),
                      "timestamp: expected a time YYYY-MM-DD HH:MM:SS.fff", "25:00"),
    "date with time": (lambda f: corrupt(f, "date", "2020-04-11 00:00"), "date: expected a date",
                       "'2020-04-11 00:00'"),
    "two bad fields": (lambda f: corrupt(corrupt(f, "quantity", "x").split("\t"), "date", "y"),
                       "quantity: expected a finite number, got 'x'",
                       "date: expected a date YYYY-MM-DD, got 'y'"),
}


@pytest.mark.parametrize("kind", list(BAD_KINDS))
def test_each_kind_of_bad_line(tmp_path, kind):
    make, *fragments = BAD_KINDS[kind]
    path = write_text(tmp_path / "k.tsv", [GOOD, GOOD, make(GOOD.split("\t")), GOOD])
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: ")) as info:
        load_sales(path, on_bad_lines="error")
    assert all(fragment in str(info.value) for fragment in fragments), str(info.value)
    expected = re.escape(f"skipped 1 malformed line(s) of 4: {path}:3: ")
    with pytest.warns(MalformedLinesWarning, match=expected):
        assert len(load_sales(path)) == 3


def test_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes((GOOD + "\n").encode() + GOOD.replace("Ruby", "R\xfcby").encode("latin-1") + b"\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:2: malformed line: not utf-8 text")):
        load_sales(path, on_bad_lines="error")
    assert load_sales(path, encoding="latin-1", on_bad_lines="error").product_name[1].startswith("R\xfcby")


def test_a_header_line_is_reported_with_a_hint(tmp_path):
    path = write_text(tmp_path / "h.tsv", ["\t".join(COLUMNS), GOOD])
    with pytest.warns(MalformedLinesWarning, match=re.escape(f"{path}:1: ") + ".*looks like a header"):
        assert len(load_sales(path)) == 1


def test_line_numbers_survive_small_blocks(tmp_path, small):
    """Blocks smaller than a line: carried-over text must not shift line numbers."""
    lines, bad = with_bad_lines(small)
    path = write_text(tmp_path / "fixture.tsv", lines, newline="\r\n")
    for block in (7, 100, 1000):
        with pytest.warns(MalformedLinesWarning) as record:
            df = load_sales(path, block_bytes=block)
        pd.testing.assert_frame_equal(df, small, check_exact=True)
        assert all(f"{path}:{n}: " in str(record[0].message) for n in bad)


def test_on_bad_lines_must_be_warn_or_error(tmp_path):
    path = write_text(tmp_path / "one.tsv", [GOOD])
    with pytest.raises(ValueError, match="on_bad_lines"):
        load_sales(path, on_bad_lines="skip")


def test_no_warning_on_a_clean_file(tmp_path, small):
    path = tmp_path / "clean.tsv.gz"
    write_sales(small, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_sales(path)


# ---------------------------------------------------------------- the generator

def test_generator_is_deterministic(tmp_path):
    a, b = generate_sales(3000, seed=5), generate_sales(3000, seed=5)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    write_sales(a, tmp_path / "a.tsv.gz")
    generate_sales(3000, seed=5, path=tmp_path / "b.tsv.gz")
    assert (tmp_path / "a.tsv.gz").read_bytes() == (tmp_path / "b.tsv.gz").read_bytes()
    c = generate_sales(3000, seed=6)
    assert not a.equals(c)
    assert (a.total_price != c.total_price).mean() > 0.5


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz"])
def test_write_then_load_gives_the_same_frame(tmp_path, suffix):
    df = generate_sales(2000, seed=1)
    path = tmp_path / f"s{suffix}"
    write_sales(df, path)
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == suffix.endswith(".gz")
    pd.testing.assert_frame_equal(load_sales(path, on_bad_lines="error"), df, check_exact=True)


def test_generated_schema(small):
    df = generate_sales(6000, seed=2)
    check_dtypes(df)
    assert len(df) == 6000 and df.id.tolist() == list(range(1, 6001))
    assert df.timestamp.is_monotonic_increasing
    assert (df.timestamp.dt.normalize() == df.date).all()
    assert df.date.min() >= pd.Timestamp("2020-01-01") and df.date.max() <= pd.Timestamp("2020-12-31")
    assert df.date.nunique() > 300
    hours = df.timestamp.dt.hour
    assert hours.min() >= 8 and hours.max() <= 21
    assert set(df.category) == set(CATEGORIES) and len(CATEGORIES) == 16
    assert df.user.nunique() >= 3 and (df.user == "ADMIN").any()
    assert df.product_code.str.fullmatch(r"[A-Z]{2}\d{5}").all()
    assert df.groupby("product_code").product_name.nunique().max() == 1        # one name per code
    assert df.groupby("product_code").unit_price.nunique().max() == 1          # one price per code
    assert (df.quantity > 0).all() and (df.unit_price > 0).all() and (df.total_price > 0).all()
    veg = df[df.category == "Vegetables"].quantity
    assert (veg != np.round(veg)).mean() > 0.5                                   # weighed: fractional kg
    packs = df[df.category == "Biscuits"].quantity
    assert (packs == np.round(packs)).all()
    assert len(generate_sales(0)) == 0
    check_dtypes(generate_sales(0))


def test_total_is_quantity_times_price_except_the_documented_discounts():
    df = generate_sales(20000, seed=3)
    list_price = df.quantity * df.unit_price
    factor = discount_factor(df)
    assert np.array_equal(df.total_price, np.round(list_price * factor, 2))
    plain = factor == 1.0
    assert np.array_equal(df.total_price[plain], np.round(list_price[plain], 2))
    ratio = (df.total_price / list_price)[~plain]
    assert 0.05 < (~plain).mean() < 0.3
    assert ratio.min() > 0.73 and ratio.max() < 0.96
    # each kind of discount is actually hit
    md = df.date.dt.month * 100 + df.date.dt.day
    for category, first, last, off in PROMOTIONS:
        first, last = (int(day.replace("-", "")) for day in (first, last))
        m = (df.category == category) & (md >= first) & (md <= last)
        assert m.sum() > 0 and (factor[m] <= 1 - off + 1e-12).all(), (category, first)
    for category, threshold, off in BULK_DISCOUNTS:
        m = (df.category == category) & (df.quantity >= threshold)
        assert m.sum() > 0 and (factor[m] <= 1 - off + 1e-12).all(), category
    assert (factor[df.category.isin(["Bakery", "Fruits"])] == 1).all()


def test_discount_factor_by_hand():
    rows = [("Beverages", "2020-03-10", 24.0, 0.85 * 0.90), ("Beverages", "2020-03-10", 1.0, 0.85),
            ("Beverages", "2020-04-10", 12.0, 0.90), ("Beverages", "2020-04-10", 11.0, 1.0),
            ("Rice", "2020-04-20", 1.0, 0.88), ("Rice", "2020-04-21", 1.0, 1.0),
            ("Rice", "2021-04-01", 5.0, 0.88 * 0.95),
            ("Vegetables", "2020-06-01", 5.0, 0.92), ("Vegetables", "2020-06-01", 4.999, 1.0),
            ("Snacks", "2020-08-15", 1.0, 0.80), ("Snacks", "2020-08-16", 1.0, 1.0),
            ("Bakery", "2020-12-25", 50.0, 1.0)]
    df = pd.DataFrame({"category": [r[0] for r in rows], "date": pd.to_datetime([r[1] for r in rows]),
                       "quantity": [r[2] for r in rows]})
    np.testing.assert_allclose(discount_factor(df), [r[3] for r in rows], rtol=1e-12)


# ---------------------------------------------------------------- where the data comes from

def test_synthetic_cache_is_made_once_then_reused(tmp_path, monkeypatch):
    df = load_sales(root=tmp_path, n_rows=500, on_bad_lines="error")
    cache = synthetic_path(tmp_path, n_rows=500)
    assert cache.parent == tmp_path / "data" and cache.name.startswith("sales.synthetic")
    assert cache.is_file() and df.attrs["source"] == str(cache)
    pd.testing.assert_frame_equal(df, generate_sales(500), check_exact=True)
    meta = json.loads(cache.with_name(cache.name + ".json").read_text())
    assert meta["n_rows"] == 500 and meta["seed"] == 0

    def boom(*args, **kwargs):
        raise AssertionError("regenerated a fresh cache")

    with monkeypatch.context() as m:
        m.setattr(S, "generate_sales", boom)
        pd.testing.assert_frame_equal(load_sales(root=tmp_path, n_rows=500), df, check_exact=True)

    calls = []
    real = S.generate_sales
    monkeypatch.setattr(S, "generate_sales", lambda *a, **k: calls.append(a) or real(*a, **k))
    cache.write_bytes(cache.read_bytes()[:-100])                    # a damaged cache is remade
    load_sales(root=tmp_path, n_rows=500)
    assert len(calls) == 1
    pd.testing.assert_frame_equal(load_sales(root=tmp_path, n_rows=500), df, check_exact=True)
    assert len(calls) == 1
    assert not list((tmp_path / "data").glob(".*tmp"))              # no temporary files left


def test_default_cache_name(tmp_path):
    assert synthetic_path(tmp_path) == tmp_path / "data" / "sales.synthetic.tsv.gz"
    assert sales_path(tmp_path, generate=False) == tmp_path / "data" / "sales.synthetic.tsv.gz"
    assert not (tmp_path / "data").exists()                         # generate=False wrote nothing


@pytest.mark.parametrize("name", ["sales.tsv", "sales.tsv.gz"])
def test_a_user_file_takes_precedence(tmp_path, monkeypatch, small, name):
    load_sales(root=tmp_path, n_rows=300)                           # a synthetic cache exists too
    user = tmp_path / "data" / name
    write_text(user, [GOOD], gz=name.endswith(".gz"))
    monkeypatch.setattr(S, "generate_sales", lambda *a, **k: pytest.fail("generated despite a user file"))
    assert sales_path(tmp_path, n_rows=300) == user
    df = load_sales(root=tmp_path, n_rows=300, on_bad_lines="error")
    assert df.attrs["source"] == str(user)
    assert len(df) == 1 and df.product_code[0] == "TY00015"


def test_plain_user_file_before_gzipped(tmp_path):
    (tmp_path / "data").mkdir()
    write_text(tmp_path / "data" / "sales.tsv.gz", [GOOD], gz=True)
    write_text(tmp_path / "data" / "sales.tsv", [GOOD, GOOD])
    assert len(load_sales(root=tmp_path)) == 2


@pytest.mark.slow
def test_default_size_is_generated_in_seconds(tmp_path):
    start = time.perf_counter()
    df = load_sales(root=tmp_path, on_bad_lines="error")
    seconds = time.perf_counter() - start
    assert len(df) == S.N_ROWS == 366_000
    assert (tmp_path / "data" / "sales.synthetic.tsv.gz").is_file()
    assert seconds < 15, seconds


# ---------------------------------------------------------------- features

def test_day_of_year():
    dates = pd.to_datetime(["2020-01-01", "2020-03-01", "2020-12-31", "2021-03-01", "2021-12-31"])
    expect = [1, 61, 366, 60, 365]
    for given in (dates, pd.Series(dates), dates.to_numpy(), pd.DataFrame({"date": dates})):
        got = day_of_year(given)
        assert got.dtype == np.int64 and got.tolist() == expect


def test_one_hot_category():
    values = ["Rice", "Oil", "Rice", "Personal Care"]
    x = one_hot_category(values)
    assert x.dtype == np.float32 and x.shape == (4, 16)
    assert (x.sum(axis=1) == 1).all()
    assert [CATEGORIES[j] for j in x.argmax(axis=1)] == values          # the fixed order
    assert category_order(["b", "a", "b"]) == ("a", "b")                 # data of your own: sorted
    np.testing.assert_array_equal(one_hot_category(["b", "a"]), [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="Tea"):
        one_hot_category(["Rice", "Tea"], CATEGORIES)


def test_features_shapes_and_names(small):
    n = len(small)
    X, y, names = features(small)
    assert X.dtype == np.float32 and X.shape == (n, 2) and names == ["quantity", "unit_price"]
    assert y.dtype == np.float32 and y.shape == (n,)
    np.testing.assert_array_equal(y, small.total_price.to_numpy(np.float32))
    X, _, names = features(small, "all")
    assert X.shape == (n, 19) and names[:3] == ["quantity", "unit_price", "day_of_year"]
    assert names[3:] == [f"category={c}" for c in CATEGORIES]
    np.testing.assert_array_equal(X[:, 2], day_of_year(small))
    np.testing.assert_array_equal(X[:, 3:], one_hot_category(small))
    X, _, names = features(small, "basic", interactions=True)
    assert X.shape == (n, 3) and names[-1] == "quantity*unit_price"
    X, _, names = features(small, "all", interactions=True)
    assert X.shape == (n, 36) and names[19] == "quantity*unit_price"
    np.testing.assert_allclose(X[:, 20:], X[:, 3:19] * X[:, 19:20], rtol=1e-6)
    with pytest.raises(ValueError, match="which"):
        features(small, "everything")


def test_category_and_date_features_lower_held_out_error():
    """Least squares on 20K rows: category (and date) information beats quantity and price alone."""
    df = generate_sales(20_000, seed=0)
    df = df.iloc[np.random.default_rng(0).permutation(len(df))].reset_index(drop=True)
    n_train = 16_000

    def held_out_mae(X, y):
        X = np.column_stack([np.ones(len(X)), X.astype(np.float64)])
        w = np.linalg.lstsq(X[:n_train], y[:n_train].astype(np.float64), rcond=None)[0]
        return np.abs(X[n_train:] @ w - y[n_train:]).mean()

    X_basic, y, _ = features(df, "basic")
    X_qp, _, _ = features(df, "basic", interactions=True)
    X_all, _, _ = features(df, "all", interactions=True)
    month = np.eye(12)[df.date.dt.month.to_numpy() - 1]
    per_month = (one_hot_category(df)[:, :, None] * month[:, None, :]).reshape(len(df), -1)
    X_month = np.column_stack([X_all, per_month * (df.quantity * df.unit_price).to_numpy()[:, None]])
    basic, qp, all_, by_month = (held_out_mae(X, y) for X in (X_basic, X_qp, X_all, X_month))
    assert all_ < 0.1 * basic                        # all features vs quantity + unit price alone
    assert all_ < 0.85 * qp, (qp, all_)              # the categories matter beyond quantity*price
    assert by_month < 0.9 * all_, (all_, by_month)   # and so do the dates (the promotions)


@pytest.mark.parametrize("block", [1, 2, 3, 5])
def test_byte_order_mark_and_tiny_blocks(tmp_path, block):
    path = tmp_path / "bom.tsv"
    path.write_bytes(b"\xef\xbb\xbf" + (GOOD + "\r\n" + GOOD + "\n").encode())
    df = load_sales(path, on_bad_lines="error", block_bytes=block)
    assert df.product_name.tolist() == ["Ruby Viet Rice 5 % Broken 22.5Kg"] * 2
