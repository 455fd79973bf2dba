"""Preferences kept between runs, as plain data (app/core/preferences_file.py: never
QSettings, whose values can be pickles); tests pass an ini file in a temp folder."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QStandardPaths

from ...kernels.ladder import Shape
from ...kernels.protocol import DEFAULT_REPEATS, MAX_DIM, MAX_REPEATS
from ..core.preferences_file import PreferencesFile
from ..core.replay import Speed
from ..core.runner_command import PREFERENCE_KEY

MAX_WATCHDOG_S = 24 * 3600.0


def open_settings(ini_path: str | None = None, writable: bool = True) -> PreferencesFile:
    """The preferences in ``ini_path`` (None: the user's file, where QSettings kept it);
    ``writable=False`` for a picture, an export or a talk: read, never written."""
    return PreferencesFile(ini_path, writable=writable)


class Preferences:
    """Typed access to the few values the app remembers; each value is checked as it is
    read, and a bad one is its default (with a note in ``notes``). A choice the user makes
    is saved at once (a file of a few hundred bytes); the window's layout when it
    closes."""

    def __init__(self, settings: PreferencesFile):
        self.settings = settings
        self._said = 0  # notes already written on stderr

    @property
    def notes(self) -> list[str]:
        return self.settings.notes

    @property
    def presentation(self) -> bool:
        return self.settings.boolean("view/presentation", False)

    @presentation.setter
    def presentation(self, on: bool) -> None:
        self.settings.set("view/presentation", bool(on))
        self.sync()

    @property
    def log_axis(self) -> bool:
        """TFLOPS on a log axis (the default: it shows every step of the ladder)."""
        return self.settings.boolean("charts/log_axis", True)

    @log_axis.setter
    def log_axis(self, on: bool) -> None:
        self.settings.set("charts/log_axis", bool(on))
        self.sync()

    @property
    def speed(self) -> Speed:
        return Speed(self.settings.choice("replay/speed", str(Speed.X4),
                                          [str(s) for s in Speed]))

    @speed.setter
    def speed(self, speed: Speed | str) -> None:
        self.settings.set("replay/speed", str(Speed(speed)))
        self.sync()

    def shape(self) -> Shape:
        """The run form's shape when the window last ran something."""
        get = self.settings.integer
        return Shape(get("run/M", 4096, 1, MAX_DIM), get("run/N", 4096, 1, MAX_DIM),
                     get("run/K", 4096, 1, MAX_DIM))

    @property
    def repeats(self) -> int:
        return self.settings.integer("run/repeats", DEFAULT_REPEATS, 1, MAX_REPEATS)

    def set_shape(self, shape: Shape, repeats: int) -> None:
        for key, value in (("M", shape.M), ("N", shape.N), ("K", shape.K),
                           ("repeats", repeats)):
            self.settings.set(f"run/{key}", int(value))
        self.sync()

    @property
    def watchdog_s(self) -> float:
        return self.settings.number("runner/watchdog_s", 60.0, 1.0, MAX_WATCHDOG_S)

    @property
    def runner_command(self) -> str:
        """The live runner's command line ("" : this installation's own runner)."""
        return self.settings.text(PREFERENCE_KEY, "")

    @runner_command.setter
    def runner_command(self, command: str) -> None:
        self.settings.set(PREFERENCE_KEY, command.strip())
        self.sync()

    @property
    def sessions_dir(self) -> Path:
        default = Path(QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.AppDataLocation) or Path.home() / ".gemmscope")
        return Path(self.settings.text("runner/sessions_dir", str(default / "sessions")))

    def window_layout(self) -> tuple[bytes | None, bytes | None]:
        """The window's geometry and its docks' state, as Qt saved them (or None)."""
        return self.settings.blob("window/geometry"), self.settings.blob("window/state")

    def set_window_layout(self, geometry: bytes | None, state: bytes) -> None:
        if geometry is not None:
            self.settings.set("window/geometry", geometry)
        self.settings.set("window/state", state)

    def sync(self) -> None:
        self.settings.sync()
        self.say_notes()

    def say_notes(self) -> None:
        """The notes not said yet, one line each on stderr (the window lists them too)."""
        for note in self.settings.notes[self._said:]:
            print(f"gemmscope: {note}", file=sys.stderr)
        self._said = len(self.settings.notes)
