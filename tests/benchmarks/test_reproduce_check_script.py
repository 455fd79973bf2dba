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


def _stepped(level: str, times: list[float]) -> list[dict]:
    """The synthetic session, ``level``'s 4096³ run with these per-launch times."""
    out = []
    for e in syn.events():
        if e["type"] == "repeat" and e["level"] == level and e["M"] == 4096:
            continue
        if e["type"] == "result" and e["level"] == level and e["M"] == 4096:
            out += [{"type": "repeat", "t": e["t"], "id": e.get("id"), "level": level,
                     "M": 4096, "N": 4096, "K": 4096, "i": i, "ms": ms,
                     "tflops": 2 * 4096**3 / ms / 1e9} for i, ms in enumerate(times)]
        out.append(e)
    return out


def test_a_run_whose_launches_stepped_mid_burst_is_marked_with_the_step(check, tmp_path,
                                                                          capsys):
    level = next(iter(syn.LADDER_TFLOPS))
    stepped = syn.write(tmp_path / "stepped.jsonl",
                        _stepped(level, [1.0] * 14 + [1.12] * 6))
    base = syn.write(tmp_path / "base.jsonl")
    check.main([str(stepped), "--baseline", str(base), "-s", "4096"])
    out = capsys.readouterr().out
    row = next(ln for ln in out.splitlines() if ln.startswith(level + " "))
    assert "[step 14/20 +12%]" in row
    assert sum("[step" in ln for ln in out.splitlines() if ln.startswith(level + " ")) == 1
    assert out.startswith("baseline: GPU ")


def test_the_gpu_each_file_ran_on_is_named_first(check, tmp_path, capsys):
    def with_uuid(uuid):
        evs = syn.events()
        evs[0] = {**evs[0], "device": {**(evs[0].get("device") or {}), "uuid": uuid}}
        return evs
    base = syn.write(tmp_path / "base.jsonl", with_uuid("GPU-aaaa"))
    same = syn.write(tmp_path / "same.jsonl", with_uuid("GPU-aaaa"))
    other = syn.write(tmp_path / "other.jsonl", with_uuid("GPU-bbbb"))
    check.main([str(same), str(other), "--baseline", str(base), "-s", "4096"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["baseline: GPU GPU-aaaa", "run 1: GPU GPU-aaaa (the baseline's)",
                         "run 2: GPU GPU-bbbb"]
