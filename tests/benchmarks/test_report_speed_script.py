"""benchmarks/report_speed.py still measures what it says: `gemmscope report` in fresh
processes, as the environment runs it and with the bytecode cached (in a folder of its
own), and the two readers in process (a row each, a number in each; no speed asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

import places

SCRIPT = places.BENCHMARKS / "report_speed.py"


def test_report_speed_prints_a_number_for_each_measure(tmp_path):
    recording = places.SESSIONS / "h200x2-ladder.jsonl.gz"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, str(SCRIPT), str(recording), "--runs", "1"],
                          capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rows = dict(line.rsplit("  ", 1) for line in proc.stdout.splitlines())
    rows = {k.strip(): v.strip() for k, v in rows.items()}
    assert rows.pop("bytecode written by a run here") == "no (PYTHONDONTWRITEBYTECODE)"
    assert set(rows) == {"file MB", "report wall s (median)", "report CPU s (median)",
                         "report wall s, bytecode cached (median)",
                         "report CPU s, bytecode cached (median)",
                         "report's read, in process s", "whole read, in process s",
                         "load average"}
    assert all(float(v) >= 0 for v in rows.values())
    assert float(rows["report wall s (median)"]) > 0
