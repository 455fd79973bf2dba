"""benchmarks/gui_frame_time.py still measures what it says: paints of each tab while
events stream in, an animated view's canvas during its animation and a still tab
repainted on the frame clock, in normal and presentation mode (a row per tab and mode; no
speed asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

import places

SCRIPT = places.BENCHMARKS / "gui_frame_time.py"


def test_frame_time_script_measures_each_view_it_is_given(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--seconds", "1.5", "--views",
                           "banks,charts", "--synthetic", "--rate", "200", "--presentation"],
                          capture_output=True, text=True, timeout=180, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("view "))
    for column in ("mode", "p99 ms", "> 16.7 ms", "CPU p99"):
        assert column in lines[head]
    rows = {tuple(line.split()[:2]): line.split() for line in lines[head + 2:] if line.strip()}
    # first, the floor: the same clocks on an empty widget (what the machine gives)
    floor = rows.pop(("floor", "-"))
    assert lines[head + 2].split()[:3] == ["floor", "-", "(empty-widget)"]
    # painted (how many in 1.5 s is the machine's: a loaded CI machine painted 1), and no
    # redraw of a view
    assert int(floor[3]) >= 1 and floor[-3] == "0"
    assert set(rows) == {(v, m) for v in ("banks", "charts") for m in ("normal", "presentation")}
    for mode in ("normal", "presentation"):
        assert rows[("banks", mode)][2] == "register_2d"  # the level the canvas animated
        assert rows[("charts", mode)][2] == "(still@frame-clock)"  # a still tab, repainted
    for cells in rows.values():
        assert int(cells[3]) >= 1  # frames were painted and timed
        assert any(c.endswith("%") for c in cells)
