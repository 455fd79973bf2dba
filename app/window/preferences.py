"""Preferences kept between runs (QSettings); tests pass an ini file in a temp folder."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

from ...kernels.protocol.commands import DEFAULT_REPEATS
from ..core.replay import Speed
from ..core.runner_command import PREFERENCE_KEY


def open_settings(ini_path: str | None = None) -> QSettings:
    if ini_path:
        return QSettings(ini_path, QSettings.Format.IniFormat)
    return QSettings("gemmscope", "gemmscope")


class Preferences:
    """Typed access to the few values the app remembers."""

    def __init__(self, settings: QSettings):
        self.settings = settings

    def _get(self, key: str, default, kind):
        value = self.settings.value(key, default)
        try:
            if kind is bool:
                return value if isinstance(value, bool) else str(value).lower() == "true"
            return kind(value)
        except (TypeError, ValueError):
            return default

    @property
    def presentation(self) -> bool:
        return self._get("view/presentation", False, bool)

    @presentation.setter
    def presentation(self, on: bool) -> None:
        self.settings.setValue("view/presentation", bool(on))

    @property
    def log_axis(self) -> bool:
        """TFLOPS on a log axis (the default: it shows every step of the ladder)."""
        return self._get("charts/log_axis", True, bool)

    @log_axis.setter
    def log_axis(self, on: bool) -> None:
        self.settings.setValue("charts/log_axis", bool(on))

    @property
    def speed(self) -> Speed:
        try:
            return Speed(self._get("replay/speed", str(Speed.X4), str))
        except ValueError:
            return Speed.X4

    @speed.setter
    def speed(self, speed: Speed | str) -> None:
        self.settings.setValue("replay/speed", str(Speed(speed)))

    def shape(self) -> tuple[int, int, int, int]:
        return (self._get("run/M", 4096, int), self._get("run/N", 4096, int),
                self._get("run/K", 4096, int), self._get("run/repeats", DEFAULT_REPEATS, int))

    def set_shape(self, M: int, N: int, K: int, repeats: int) -> None:
        for key, value in (("M", M), ("N", N), ("K", K), ("repeats", repeats)):
            self.settings.setValue(f"run/{key}", int(value))

    @property
    def watchdog_s(self) -> float:
        return self._get("runner/watchdog_s", 60.0, float)

    @property
    def runner_command(self) -> str:
        """The live runner's command line ("" : this installation's own runner)."""
        value = self.settings.value(PREFERENCE_KEY, "")
        return ", ".join(value) if isinstance(value, list) else str(value or "")

    @runner_command.setter
    def runner_command(self, command: str) -> None:
        self.settings.setValue(PREFERENCE_KEY, command.strip())

    @property
    def sessions_dir(self) -> Path:
        default = Path(QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.AppDataLocation) or Path.home() / ".gemmscope")
        return Path(self._get("runner/sessions_dir", str(default / "sessions"), str))

    def sync(self) -> None:
        self.settings.sync()
