"""`gemmscope doctor` and the start checks as a user meets them: through the `gemmscope`
entry point, in a subprocess where Qt must not be imported (or is not installed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gemmscope.app import main as entry
from gemmscope.app.core import machine_facts

# hide Qt from the child: find_spec and import both see "not installed"
NO_QT = "import sys\nfor m in ('PySide6', 'pyqtgraph', 'shiboken6'):\n    sys.modules[m] = None\n"
LDD_MISSING = ("\tlibxcb-icccm.so.4 => not found\n\tlibxcb-keysyms.so.1 => not found\n"
               "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x1)\n")


def run(code: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)


def no_display_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "XDG_SESSION_TYPE")}


def test_doctor_reports_json_findings_and_replay_only_here(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", GEMMSCOPE_NO_GPU="1")
    code = ("import sys\nfrom gemmscope.app.main import main\n"
            "sys.exit(main(['doctor', '--json', '--no-try-runner', '--settings', 'p.ini']))")
    proc = run(code, env, tmp_path)
    data = json.loads(proc.stdout)
    assert proc.returncode == data["exit"] == 1  # GEMMSCOPE_NO_GPU: replay only
    found = {f["name"]: f for f in data["findings"]}
    assert found["display"]["status"] == "ok"
    assert found["GEMMSCOPE_NO_GPU"]["status"] == "fail"
    assert {"Qt", "CUDA driver", "CuPy", "NVML", "GPM", "ncu", "performance counters",
            "GPU memory", "runner"} <= set(found)


def test_doctor_runs_without_pyside6_and_says_the_app_cannot_start(tmp_path):
    code = NO_QT + ("from gemmscope.app.main import main\n"
                    "rc = main(['doctor', '--no-try-runner'])\n"
                    "assert not [m for m in sys.modules if m.startswith('PySide6.')]\n"
                    "sys.exit(rc)")
    proc = run(code, dict(os.environ, QT_QPA_PLATFORM="offscreen"), tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "PySide6 and pyqtgraph not installed" in proc.stdout
    assert "pip install 'gemmscope[app]'" in proc.stdout
    assert "verdict: the app cannot open its window (exit 2)" in proc.stdout


def test_the_app_without_pyside6_explains_instead_of_a_traceback(tmp_path):
    code = NO_QT + "from gemmscope.app.main import main\nsys.exit(main([]))"
    proc = run(code, dict(os.environ, QT_QPA_PLATFORM="offscreen"), tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "Qt: PySide6 and pyqtgraph not installed" in proc.stderr


def test_the_app_with_no_display_exits_2_with_the_doctors_finding(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "--settings",
                           str(tmp_path / "p.ini")], env=no_display_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2  # not Qt's abort (134)
    assert "gemmscope cannot open its window:" in proc.stderr
    assert "no display: neither $DISPLAY nor $WAYLAND_DISPLAY is set" in proc.stderr
    assert "QT_QPA_PLATFORM=offscreen" in proc.stderr
    assert "qt.qpa" not in proc.stderr  # Qt never started


def test_the_app_names_the_xcb_packages_before_qt_would_abort(monkeypatch, capsys):
    for var in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE",
                "QT_QPA_PLATFORM_PLUGIN_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setattr(machine_facts, "run_ldd", lambda path: LDD_MISSING)
    assert entry.main([]) == 2
    err = capsys.readouterr().err
    assert "libqxcb.so lacks libxcb-icccm.so.4, libxcb-keysyms.so.1" in err
    assert "fix: Debian/Ubuntu: sudo apt install libxcb-icccm4 libxcb-keysyms1" in err
    assert "fix: Fedora: sudo dnf install xcb-util-wm xcb-util-keysyms" in err


def test_no_gpu_status_line_points_to_the_doctor(tmp_path):
    out = tmp_path / "start.png"
    proc = subprocess.run([sys.executable, "-m", "gemmscope.app.main", "--screenshot", str(out),
                           "--settings", str(tmp_path / "p.ini")],
                          env=dict(os.environ, QT_QPA_PLATFORM="offscreen", GEMMSCOPE_NO_GPU="1"),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    status = proc.stdout.splitlines()[-1]
    assert status.startswith("status: replay — ") and "see `gemmscope doctor`" in status
