"""benchmarks/reproduce_check.py without a GPU: fresh machines' burst figures beside a
recording's, per level and size, and its exit code says whether all are within the
tolerance."""

from __future__ import annotations

import benchmark_script
import pytest
import synthetic_session as syn


@pytest.fixture(scope="module")
def check():
    return benchmark_script.load("reproduce_check")


def _faster(level: str, factor: float) -> list[dict]:
    evs = syn.events()
    for e in evs:
        if e["type"] == "result" and e["level"] == level:
            e["tflops"] *= factor
    return evs


def test_runs_equal_to_the_baseline_are_all_within(check, tmp_path, capsys):
    base = syn.write(tmp_path / "base.jsonl")
    assert check.main([str(base), str(base), "--baseline", str(base), "-s", "4096"]) == 0
    out = capsys.readouterr().out
    n = sum(1 for e in syn.events() if e["type"] == "result" and e["M"] == 4096
            and e["M"] == e["N"] == e["K"])
    assert f"{n} of {n} within 2% in every run" in out


def test_a_level_off_by_more_than_the_tolerance_in_one_run_fails(check, tmp_path, capsys):
    base = syn.write(tmp_path / "base.jsonl")
    level = next(iter(syn.LADDER_TFLOPS))
    off = syn.write(tmp_path / "off.jsonl", _faster(level, 1.03))
    assert check.main([str(base), str(off), "--baseline", str(base), "-s", "4096"]) == 1
    row = next(ln for ln in capsys.readouterr().out.splitlines()
               if ln.startswith(level + " "))
    assert "(+3.0)" in row and row.rstrip().endswith("NO")
    assert check.main([str(off), "--baseline", str(base), "-s", "4096",
                       "--tolerance-pct", "3.5"]) == 0
