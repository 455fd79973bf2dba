"""The views of tabs not on screen are made after the first paint, or when first needed
(issue #12, cold start): a view made late is the view it would have been, and nothing
on the way to the first paint imports the CLI or the other tabs' views."""

from __future__ import annotations

import json
import subprocess
import sys

import synthetic_session as syn

from gemmscope.app.theme import PRESENTATION
from gemmscope.app.views.base import View
from gemmscope.app.views.registry import VIEWS
from gemmscope.kernels.protocol.decoding import of


def test_only_the_tab_on_screen_has_its_view_until_another_is_asked_for(make_window):
    window = make_window()
    assert list(window.views.made) == ["charts"]
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == \
        [spec.title for spec in VIEWS]
    assert list(window.views) == [spec.name for spec in VIEWS]  # names: nothing made
    assert not isinstance(window.tabs.widget(2), View)
    tiling = window.views["tiling"]  # asked for: made, in its tab, the tab shown kept
    assert window.tabs.widget(2) is tiling and tiling.objectName() == "view_tiling"
    assert window.tabs.currentIndex() == 0 and list(window.views.made) == ["charts", "tiling"]


def test_a_tab_clicked_shows_its_view_with_what_it_missed(qtbot, make_window):
    window = make_window()
    window.show()  # no turn of the event loop yet: nothing made after a paint
    for event in syn.events():
        window.handle(of(event))
    window.throttle.flush()
    assert not window.views.is_made("telemetry")
    window.tabs.setCurrentIndex(1)  # as a click on the tab does
    view = window.tabs.currentWidget()
    assert window.views.is_made("telemetry") and view is window.views["telemetry"]
    runs = window.store.run_windows()
    assert runs
    qtbot.waitUntil(lambda: view.windows == runs and len(view.run_labels) == len(runs))


def test_after_the_first_paint_every_view_is_made(qtbot, make_window):
    window = make_window()
    window.show()
    qtbot.waitUntil(lambda: len(window.views.made) == len(VIEWS))
    assert [window.tabs.widget(i).objectName() for i in range(window.tabs.count())] == \
        [f"view_{spec.name}" for spec in VIEWS]


def test_a_view_made_late_hears_the_level_theme_and_animation(make_window, synthetic_file):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.replay.deliver_all()
    window.throttle.flush()
    assert window.select_level("register_2d")
    window.set_animated(False)
    window.set_presentation(True, full_screen=False)
    assert not window.views.is_made("telemetry") and not window.views.is_made("tiling")
    telemetry, tiling = window.views["telemetry"], window.views["tiling"]
    assert telemetry.selected == "register_2d" and telemetry.theme is PRESENTATION
    assert tiling.canvas.level_id == "register_2d" and not tiling.canvas.animated
    window.set_presentation(False)


def test_an_animation_of_a_tab_not_made_yet_exports(make_window, synthetic_file, tmp_path):
    window = make_window()
    assert window.open_recording(synthetic_file)
    window.replay.deliver_all()
    assert not window.views.is_made("banks")
    path = window.export_named(tmp_path / "banks.png", "banks")
    assert path.stat().st_size > 0 and window.views.is_made("banks")


def test_the_window_opens_without_the_cli_or_the_other_tabs_views(tmp_path):
    code = (
        "import json, sys\n"
        "from gemmscope.app import main\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from gemmscope.app.window.main_window import MainWindow\n"
        "from gemmscope.app.window.preferences import open_settings\n"
        "app = QApplication([])\n"
        f"window = MainWindow(open_settings({str(tmp_path / 'p.ini')!r}))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gemmscope'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert "gemmscope.app.views.charts" in loaded
    for name in ("gemmscope.kernels.cli.main", "gemmscope.kernels.models",
                 "gemmscope.app.window.exports", *(f"gemmscope.app.views.{spec.name}"
                                                   for spec in VIEWS[1:])):
        assert name not in loaded, name


def test_the_window_opens_without_superqt_or_cuda_bindings(tmp_path):
    """The first paint needs neither: superqt (all of its widgets load with it) is
    imported where a flow row is made, in tabs made later; pyqtgraph's optional CUDA
    import is hidden while the GUI start imports it."""
    code = (
        "import json, sys\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from gemmscope.app import gui_main\n"
        "gui_main._import_pyqtgraph_without_cuda()\n"
        "from gemmscope.app.window.main_window import MainWindow\n"
        "from gemmscope.app.window.preferences import open_settings\n"
        "app = QApplication([])\n"
        f"window = MainWindow(open_settings({str(tmp_path / 'p.ini')!r}))\n"
        "import pyqtgraph.widgets.RawImageWidget as raw\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "                ('superqt', 'cuda', 'pyqtgraph'))\n"
        "try:\n"  # hidden only while pyqtgraph imported: importable afterwards
        "    from cuda.bindings import runtime\n"
        "    after = runtime is not None\n"
        "except ImportError:\n"
        "    after = 'cuda.bindings' not in loaded\n"  # not installed here
        "print(json.dumps([loaded, raw.cudart is None, after]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    loaded, hidden, importable_after = json.loads(out.stdout.splitlines()[-1])
    assert "pyqtgraph" in loaded and hidden and importable_after
    assert not [m for m in loaded if m.startswith(("superqt", "cuda.bindings.runtime"))]
