"""benchmarks/ladder_warm.py without a GPU (--smoke): a stand-in runner runs the ladder
twice in two processes over one build cache folder, and the table says the second took
every build from the cache."""

from __future__ import annotations

import benchmark_script


def test_the_smoke_mode_runs_the_ladder_cold_then_warm(capsys):
    script = benchmark_script.load("ladder_warm")
    assert script.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    lines = {line[:24].strip(): line[24:].split() for line in out.splitlines()}
    assert lines["results"] == ["19", "19"]
    assert lines["builds from the cache"] == ["0/19", "19/19"]
    assert lines["naive"] == ["1.50", "NVRTC", "0.02", "cache"]
    assert "key to last result (s)" in lines
