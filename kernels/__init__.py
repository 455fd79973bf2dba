"""GPU side of gemmscope: levels, NVRTC build, runner, timing, verification, telemetry,
in folders by role (README, "Layout"): cli > engine, profile > toolchain, drive >
device, models, results > ladder, protocol; each imports only the layers below it.

Nothing here imports Qt, and nothing touches the GPU at import time: CuPy is imported
lazily in :mod:`.device.gpu` and NVML in :mod:`.device.telemetry`.
"""

from __future__ import annotations

from typing import Any


def _version() -> str:
    """The installed distribution's version; in a checkout that is not installed, the
    version its pyproject.toml names (else "unknown")."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gemmscope")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
                return str(tomllib.load(f)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def __getattr__(name: str) -> Any:
    """``__version__``, looked up when first asked (a runner's header asks): reading the
    installed distributions' metadata is ~30 ms of every start otherwise, the app's too."""
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
