"""A result measured again (``record --update``, ``--append``) is shown once, as its
newest run, in the first run's place, by every reader: ``report`` (text and Markdown), the
CSV export; the older run stays in the file as history."""

from __future__ import annotations

import csv
import io

from gemmscope.app.core import export
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.records import Result
from gemmscope.kernels.results.rows import newest

HEADER = {"type": "session", "t": 0.0, "protocol": protocol.PROTOCOL_VERSION,
          "created": "2026-12-02T00:00:00+00:00", "levels": {},
          "device": {"name": "Test GPU", "arch": "sm_90", "sm_count": 132}}


def result(t: float, level: str, tflops: float, M: int = 64, mode: str = "burst"
           ) -> dict:
    return {"type": "result", "t": t, "level": level, "M": M, "N": M, "K": M,
            "dtype": "fp32", "precision": "fp32", "median_ms": 1.0, "tflops": tflops,
            "verified": True, "rel_err": 1e-7, "repeats": 5, "mode": mode}


EVENTS = [HEADER, result(1.0, "naive", 1.0), result(2.0, "coalesced", 2.0),
          result(3.0, "naive", 1.0, mode="sustained"),
          {**HEADER, "t": 0.5},  # the update's runner
          result(1.0, "naive", 1.5)]


def test_newest_keeps_the_first_runs_place_and_takes_the_last_runs_numbers():
    results = [of(e) for e in EVENTS if e["type"] == "result"]
    assert all(isinstance(r, Result) for r in results)
    shown = newest(results)
    assert [(r.level, str(r.mode), r.tflops) for r in shown] == [
        ("naive", "burst", 1.5), ("coalesced", "burst", 2.0), ("naive", "sustained", 1.0)]


def test_report_shows_the_newest_result_and_counts_the_older_as_history(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(protocol.dumps(e) + "\n" for e in EVENTS))
    for markdown in ([], ["--markdown"]):
        out = io.StringIO()
        assert cli.main(["report", *markdown, str(path)], stdout=out,
                        stderr=io.StringIO()) == 0
        text = out.getvalue()
        assert "3 results (and 1 older, kept as history)" in text
        naive = [line for line in text.splitlines()
                 if line.lstrip("| ").startswith("naive") and "burst" in line]
        assert len(naive) == 1 and "1.500" in naive[0]


def test_the_csv_export_shows_the_newest_result_of_a_run_measured_again():
    store = SessionStore()
    for e in EVENTS:
        store.handle(of(e))
    rows = list(csv.DictReader(io.StringIO(export.results_csv(store))))
    assert [(r["level"], r["mode"], r["TFLOPS"]) for r in rows] == [
        ("naive", "burst", "1.500"), ("coalesced", "burst", "2.000"),
        ("naive", "sustained", "1.000")]
