"""benchmarks/trace_steps.py: the per-K-step table of a measured trace (no GPU), checked on
a trace whose times are known, built through the trace buffer like a launch's."""

from __future__ import annotations

import gzip

import benchmark_script
import numpy as np
import pytest

from gemmscope.kernels.protocol import decoding, trace_buffer
from gemmscope.kernels.protocol.trace_records import KIND_NAMES, Trace


@pytest.fixture(scope="module")
def steps():
    return benchmark_script.load("trace_steps")


def _trace(rows: list[tuple[int, str, int, int, int]], blocks: int = 1,
           apart_ns: int = 0) -> Trace:
    """(lane, kind, tile, k, t_ns) rows of block 0 on SM 3: a producer (lane 0) and one
    consumer (lane 1), as a launch's buffer holds them; ``blocks`` of them, block b's
    rows b x ``apart_ns`` later (its own tiles) on SM 3 + b."""
    a = [np.concatenate([np.array(c)] * blocks) for c in zip(*rows, strict=True)]
    block = np.repeat(np.arange(blocks), len(rows))
    kind = np.array([KIND_NAMES.index(x) for x in a[1]])
    t = a[4] + 10**9 + block * apart_ns
    counts, recs = trace_buffer.encode(block, a[0], kind, a[2] + 2 * block, a[3],
                                       3 + block, t, t * 2, 2, blocks, 1024,
                                       device_like=False)
    event = {"type": "trace", "t": 0.0, "level": "fp8_deep", "M": 256, "N": 128 * blocks,
             "K": 512, "grid": blocks, "lanes_per_block": 2, "sm_count": 8,
             "tiles": 2 * blocks, "stage_every": 1,
             **trace_buffer.decode(counts, recs, lanes_per_block=2)}
    trace = decoding.of(event)
    assert isinstance(trace, Trace)
    return trace


# tile 0: four K steps; the consumer waits 1005 ns for step 0 and 170 ns for step 3, whose
# copies were issued only when step 0 freed its stage; tile 1: one step
ROWS = [(0, "lane_start", -1, 0, 0), (1, "lane_start", -1, 0, 0),
        (0, "load_issued", 0, 0, 10), (0, "load_issued", 0, 1, 20),
        (0, "load_issued", 0, 2, 30), (1, "tile_begin", 0, 0, 5),
        (1, "data_ready", 0, 0, 1010), (1, "mma_done", 0, 0, 1510),
        (0, "load_issued", 0, 3, 1500), (1, "data_ready", 0, 1, 1520),
        (1, "mma_done", 0, 1, 2020), (1, "data_ready", 0, 2, 2030),
        (1, "mma_done", 0, 2, 2530), (1, "data_ready", 0, 3, 2700),
        (1, "mma_done", 0, 3, 3200), (1, "tile_end", 0, 4, 4000),
        (0, "load_issued", 1, 0, 2600), (1, "tile_begin", 1, 0, 4100),
        (1, "data_ready", 1, 0, 4400), (1, "mma_done", 1, 0, 4900),
        (1, "tile_end", 1, 1, 5300), (0, "lane_end", -1, 0, 5400),
        (1, "lane_end", -1, 0, 5400)]


def test_each_k_step_says_its_copies_latency_wait_and_products(steps):
    rows, other = steps.step_rows(_trace(ROWS))
    by_k = {r["k"]: r for r in rows}
    assert sorted(by_k) == [0, 1, 2, 3]
    assert sorted(by_k[0]["issue_to_data"]) == [1000, 1800]  # tile 0 and tile 1
    assert by_k[1]["issue_to_data"] == [1500] and by_k[2]["issue_to_data"] == [2000]
    assert by_k[3]["issue_to_data"] == [1200]
    # the steps whose consumer waited more than WAITED_NS: their latency only
    assert sorted(by_k[0]["waited"]) == [1000, 1800] and by_k[3]["waited"] == [1200]
    assert by_k[1]["waited"] == [] and by_k[2]["waited"] == []
    assert sorted(by_k[0]["wait"]) == [300, 1005] and by_k[3]["wait"] == [170]
    assert by_k[1]["math"] == [500] and sorted(by_k[0]["math"]) == [500, 500]
    assert sorted(other["epilogue"]) == [400, 800]
    assert other["between tiles"] == [100]


def test_the_table_gives_medians_in_microseconds_and_the_steps_that_waited(steps):
    text = steps.table(_trace(ROWS), 8)
    lines = text.splitlines()
    assert lines[0].startswith("fp8_deep 256x128x512") and "K steps sampled all" in lines[0]
    row3 = next(ln for ln in lines if ln.split()[0] == "3")
    assert row3.split() == ["3", "1", "1.20", "1", "1.20", "0.17", "0.50"]
    assert "epilogue: 0.60 µs (median of 2)" in lines
    assert "between tiles: 0.10 µs (median of 1)" in lines


def test_the_blocks_starts_and_ends_say_the_launchs_skew_and_tail(steps):
    """Three blocks, each 250 ns after the one before (a launch's skew: clusters of two
    CTAs wait for SMs in pairs), each running as long: block b starts 250 b ns after the
    first and ends 250 (2 - b) ns before the last."""
    _rows, other = steps.step_rows(_trace(ROWS, blocks=3, apart_ns=250))
    assert sorted(other["a block's start after the first block's"]) == [0, 250, 500]
    assert sorted(other["a block's end before the last block's"]) == [0, 250, 500]
    lines = steps.table(_trace(ROWS, blocks=3, apart_ns=250), 8).splitlines()
    assert "a block's start after the first block's: 0.25 µs (median of 3)" in lines


def test_a_recording_without_a_measured_trace_of_the_level_is_said(steps, tmp_path):
    with gzip.open(steps.BUNDLED, "rb") as fh:
        header = fh.readline()  # the bundled recording's session header, alone
    empty = tmp_path / "header_only.jsonl"
    empty.write_bytes(header)
    with pytest.raises(SystemExit, match="no measured trace of fp8_deep"):
        steps.traces(empty, "fp8_deep")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not a recording\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="cannot be read"):
        steps.traces(broken, None)


def test_a_file_of_lone_trace_lines_is_read_as_trace_launch_writes_it(steps, tmp_path):
    with gzip.open(steps.BUNDLED, "rb") as fh:
        line = [ln for ln in fh if ln.startswith(b'{"type":"trace"')
                and b'"level":"fp8_deep"' in ln][-1]
    lone = tmp_path / "fp8_deep_trace.jsonl"
    lone.write_bytes(line)
    (trace,) = steps.traces(lone, "fp8_deep")
    assert trace.level == "fp8_deep" and trace.M == 4096 and len(trace.events) > 0
