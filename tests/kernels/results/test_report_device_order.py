"""`gemmscope report` of a two-GPU recording lists each measurement's GPUs in one order,
GPU 0 then GPU 1, in every row pair (the recording has them in the order they arrived)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.records import Result
from gemmscope.kernels.results.session_report import report_lines

TWO_GPUS = Path(__file__).resolve().parents[3] / "resources/sessions/h200x2-ladder.jsonl.gz"


@pytest.mark.skipif(not TWO_GPUS.exists(), reason="the bundled recording is not here")
def test_each_measurement_lists_its_gpus_in_index_order():
    lines, problem = report_lines(str(TWO_GPUS))
    assert problem is None
    rows = [line.split() for line in lines if line[:1].isdigit() and " " in line]
    pairs = [(int(cells[0]), cells[1]) for cells in rows]
    assert len(pairs) >= 20
    for (d0, level0), (d1, level1) in zip(pairs[::2], pairs[1::2], strict=True):
        assert (d0, d1) == (0, 1) and level0 == level1
    # and the file itself has GPU 1 first for some (what the order was before)
    results = [r for r in recording.read_session(str(TWO_GPUS), only=(Result,)).results]
    firsts = {}
    for r in results:
        firsts.setdefault((r.level, r.shape, r.mode), r.device_index)
    assert 1 in firsts.values()
