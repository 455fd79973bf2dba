"""benchmarks/gui_frame_time.py still measures what it says: paints of each animated view's
canvas during its animation while events stream in (a row per view; no speed asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "gui_frame_time.py"


def test_frame_time_script_measures_each_view_it_is_given(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "1.5", "--views",
                           "banks,swizzle", "--synthetic", "--rate", "200"],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("view "))
    assert "p99 ms" in lines[head] and "> 16.7 ms" in lines[head]
    rows = {line.split()[0]: line.split() for line in lines[head + 2:] if line.strip()}
    assert set(rows) == {"banks", "swizzle"}
    assert rows["banks"][1] == "register_2d"  # the level the banks canvas animated
    for cells in rows.values():
        assert int(cells[2]) > 5  # animation frames were painted and timed
        assert cells[6].endswith("%")
