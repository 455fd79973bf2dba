"""The window is composed, not mixed (issue 44 item 1): what it owns (the view state's
keeper, the talk, the run buttons, the kernel docks) is given what it needs through a
Protocol, never an ``Any``; the window satisfies each of them, as mypy checks over all
of app/ in CI."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import places

APP = places.REPO / "app"
# the names a window, a store or an application travels under in app/
HOST_NAMES = frozenset({"window", "store", "app", "w", "host", "controller", "parent"})


def any_hosts(path: Path) -> list[str]:
    """``name: Any`` parameters and annotated names of ``path`` that hold a window, a store
    or an application (by their names), with their line numbers."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.arg):
            name, annotation = node.arg, node.annotation
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name | ast.Attribute):
            target = node.target
            name = target.id if isinstance(target, ast.Name) else target.attr
            annotation = node.annotation
        else:
            continue
        if name in HOST_NAMES and isinstance(annotation, ast.Name) and annotation.id == "Any":
            found.append(f"{path.name}:{node.lineno} {name}")
    return found


def test_no_window_store_or_app_is_typed_any_in_the_app():
    found = [f"{path.parent.relative_to(APP)}/{hit}" for path in sorted(APP.rglob("*.py"))
             for hit in any_hosts(path)]
    assert found == []


def test_the_finder_sees_the_forms_the_app_had(tmp_path):
    # what app/ held before issue 44 (28 of them): so the test above can fail
    code = tmp_path / "x.py"
    code.write_text("from typing import Any\n"
                    "def run_talk(app: Any, window: Any, talk: object) -> int: ...\n"
                    "class Mixin:\n    store: Any\n"
                    "def f(self) -> None:\n    w: Any = self.window\n")
    assert sorted(hit.split(" ")[1] for hit in any_hosts(code)) == ["app", "store", "w", "window"]


def test_the_view_state_is_an_object_the_window_owns(make_window):
    from gemmscope.app.window.main_window import MainWindow
    from gemmscope.app.window.view_state_keeper import ViewStateKeeper

    assert not [c.__name__ for c in MainWindow.__mro__ if c.__name__.endswith("Mixin")]
    window = make_window()
    assert isinstance(window.view_keeper, ViewStateKeeper)
    assert window.view_keeper.host is window


def test_what_the_window_owns_takes_protocols():
    from gemmscope.app.window import (
        baseline,
        kernel_docks,
        keys,
        ncu_report_open,
        talk,
        talk_check,
        talk_keys,
    )
    from gemmscope.app.window.view_state_keeper import ViewStateKeeper

    def hints(call: object) -> dict[str, object]:
        return typing.get_type_hints(call)

    seams = {ViewStateKeeper.__init__: "host", talk.TalkController.__init__: "window",
             talk_keys.TalkKeys.__init__: "controller", talk_check.check_talk: "window",
             kernel_docks.KernelDocks.__init__: "window", keys.install_shortcuts: "window",
             baseline.open_baseline: "window", ncu_report_open.open_report: "window"}
    for call, name in seams.items():
        kind = hints(call)[name]
        assert getattr(kind, "_is_protocol", False), (call, kind)


def test_ci_type_checks_the_whole_app():
    ci = (places.REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = ci[ci.index("python3 -m mypy"):].split(")", 1)[0]
    packages = command.split("-p ")[1:]
    assert sorted(p.split()[0].rstrip("\\") for p in packages) == \
        ["gemmscope.app", "gemmscope.kernels"]
