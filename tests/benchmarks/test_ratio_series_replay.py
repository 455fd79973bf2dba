"""benchmarks/ratio_series.py --replay: a kept series read back (no GPU), its loops' ratios
by three estimators; a file that is not a series is refused in one line."""

from __future__ import annotations

import json

import benchmark_script
import pytest


@pytest.fixture(scope="module")
def rsr():
    return benchmark_script.load("ratio_series")


def _series(pairs, level="vectorized"):
    return json.dumps({"level": level, "reference": "cublas_fp32", "size": 4096,
                       "verified": [True, True], "pairs": pairs}) + "\n"


def test_two_speeds_move_the_loops_median_and_not_their_pseudo_median(rsr, tmp_path, capsys):
    # a level whose launches alternate between two speeds in runs, the slow share
    # shifting from loop to loop: loop medians jump between the speeds
    pairs, t = [], 0.0
    for loop in range(6):
        slow = 24 + (loop % 2) * 3  # 24 or 27 slow launches of 50
        for i in range(50):
            pairs.append([t, 4.24 if i < slow else 4.17, 2.66, 1980.0, 1980.0, 40.0, -1.0])
            t += 0.015
    path = tmp_path / "s.jsonl"
    path.write_text(_series(pairs))
    assert rsr.main(["--replay", str(path)]) == 0
    out = capsys.readouterr().out
    row = next(x for x in out.splitlines() if x.startswith("vectorized") and " 50 " in x)
    median, pseudo, mean = (float(c.rstrip("%")) for c in row.split()[3:6])
    assert median == pytest.approx(100 * (4.24 / 4.17 - 1), abs=0.01)  # one speed or other
    assert pseudo < 0.5 and mean < 0.5


GOOD = [0.0, 4.2, 2.7, 1980.0, 1980.0, 40.0, 300.0]


@pytest.mark.parametrize("text", [
    "not json\n", json.dumps([1, 2]) + "\n", "",
    _series([[0.0, -1.0, *GOOD[2:]]]),  # a launch of no time
    _series([GOOD[:3]]),  # fewer numbers than the script writes
    _series([[*GOOD[:6], True]]), _series([[*GOOD[:6], "300"]]),
    _series([GOOD]).replace('"size": 4096', '"size": 0')])
def test_a_file_that_is_not_a_series_is_refused_in_one_line(rsr, tmp_path, capsys, text):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    assert rsr.main(["--replay", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ratio_series: ") and "bad.jsonl" in err[0]


def test_a_device_or_a_missing_file_is_refused_without_reading_it(rsr, tmp_path, capsys):
    assert rsr.main(["--replay", "/dev/zero"]) == 2
    assert rsr.main(["--replay", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "not a regular file" in err[0] and "none.jsonl" in err[1]
