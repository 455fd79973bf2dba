"""Exports and the store on hostile recordings: safe to open, n/a for what overflowed."""

from __future__ import annotations

import csv
import io
import re

from gemmscope.app.core import export
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.protocol.decoding import from_builtins, of

HEADER = {"type": "session", "t": 0.0, "protocol": 1, "created": "x", "levels": {},
          "device": {"name": "<img src=file:///etc/passwd> GPU",
                     "peak_tflops": {"fp32": 67.0}}}


def result(**fields) -> dict:
    base = {"type": "result", "t": 1.0, "level": "naive", "M": 64, "N": 64, "K": 64,
            "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": 1.0,
            "verified": True, "rel_err": 1e-7, "repeats": 3}
    return from_builtins({**base, **fields})


def store_of(*events: dict) -> SessionStore:
    store = SessionStore()
    for ev in (from_builtins(dict(HEADER)), *events):
        store.handle(of(ev))
    return store


def test_csv_text_cells_that_look_like_formulas_are_neutralised():
    store = store_of(
        result(level='=HYPERLINK("http://evil","x")', precision="+1+1", dtype="@SUM(A1)",
               reference="-2+3", reference_tflops=2.0, throttled=["\tTab", "\rCR"], t=-1.5,
               rel_err=-0.25),
        result(level="naive", t=2.0))
    rows = list(csv.reader(io.StringIO(export.results_csv(store))))
    head, evil, plain = rows[0], rows[1], rows[2]
    cell = dict(zip(head, evil, strict=True))
    assert cell["level"] == '\'=HYPERLINK("http://evil","x")'
    assert cell["precision"] == "'+1+1" and cell["dtype"] == "'@SUM(A1)"
    # control characters are stripped (a tab or CR a space): one line per cell
    assert cell["reference"] == "'-2+3" and cell["clocks held back"] == "⚠  Tab,  CR"
    # numbers keep their sign: a negative number is not a formula
    assert cell["t (s)"] == "-1.500" and cell["rel. error"] == "-2.50e-01"
    assert dict(zip(head, plain, strict=True))["level"] == "naive"
    assert export.csv_text("-1.5") == "'-1.5" and export.csv_text("a=b") == "a=b"


def test_markdown_takes_no_markup_from_the_recording():
    store = store_of(result(level="naive", throttled=["<script>alert(1)</script>"]),
                     from_builtins({
                         "type": "error", "t": 2, "kind": "launch", "level": "naive",
                         "message": "![x](file:///home/me/.ssh/id_rsa) | cell\nsecond line"}))
    md = export.ladder_markdown(store, "a`b.jsonl")
    assert not re.search(r"(?<!\\)[<>\[\]]", md)  # every bracket from the recording escaped
    assert "\\<img src=file\\:///etc/passwd\\> GPU" in md and "\\<script\\>" in md
    assert "\\!\\[x\\](file\\:///home/me/.ssh/id\\_rsa) \\| cell second line" in md
    assert "Source: `a'b.jsonl`" in md


def test_derived_numbers_that_overflow_are_not_available():
    store = store_of(result(level="cublas_fp32", tflops=1e-300),
                     result(level="naive", tflops=1e308),
                     result(level="coalesced", tflops=1e308, reference_tflops=1e-300))
    naive, coalesced = store.results[1], store.results[2]
    assert store.row(naive).pct_of_reference is None  # 100 x 1e308 / 1e-300 overflows
    assert store.row(naive).pct_of_peak is None  # 100 x 1e308 / 67
    assert store.row(coalesced).pct_of_reference is None
    rows = list(csv.DictReader(io.StringIO(export.results_csv(store))))
    assert rows[1]["% of cuBLAS"] == "–" and rows[1]["% of peak"] == "–"
    assert "inf" not in export.ladder_markdown(store, "x").lower().replace("info", "")


def test_a_catalog_of_wrong_types_gives_levels_with_defaults():
    header = from_builtins({**HEADER, "catalog": [
        {"id": "naive", "title": 5, "order": "first", "params": {"BLOCK": "32"},
         "block": "32x32", "tile": [32, "x"], "precision": ["fp32"]},
        {"id": "wmma", "order": 1.5}, {"no": "id"}, 7]})
    store = SessionStore()
    store.handle(of(header))
    assert [lv.id for lv in store.levels] == ["naive", "wmma"]
    naive = store.level("naive")
    assert naive.title == "naive" and naive.params == {} and naive.block == ()
    assert naive.tile == (32,) and naive.precision == "?" and naive.order == 0


def test_exports_are_written_whole(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("old\n")
    store = store_of(result())
    assert export.write_export(path, export.results_csv(store)) == path
    assert path.read_text().startswith("level,precision")
    assert [p.name for p in tmp_path.iterdir()] == ["results.csv"]
    with export.replacing(tmp_path / "chart.png") as temp:
        assert temp.suffix == ".png" and temp.parent == tmp_path
        temp.write_bytes(b"\x89PNG")
    assert (tmp_path / "chart.png").read_bytes() == b"\x89PNG"


def test_exports_say_the_mode_and_set_sustained_beside_burst():
    store = store_of(result(level="naive", tflops=2.0),
                     result(level="naive", tflops=1.5, mode="sustained", trials=3,
                            tflops_min=1.4, tflops_max=1.6, throttled=["SwPowerCap"],
                            power_limit_w=700.0, t=2.0))
    rows = list(csv.DictReader(io.StringIO(export.results_csv(store))))
    assert [(r["level"], r["mode"], r["TFLOPS"]) for r in rows] == [
        ("naive", "burst", "2.000"), ("naive", "sustained", "1.500")]
    md = export.ladder_markdown(store, "x.jsonl")
    header = next(line for line in md.splitlines() if line.startswith("| level"))
    assert "sustained TFLOPS" in header and "power-limited" in header
    naive = next(line for line in md.splitlines() if line.startswith("| naive"))
    assert "1.500" in naive and "700 W limit" in naive
