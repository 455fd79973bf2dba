from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_addoption(parser: pytest.Parser) -> None:
    # the GPU machine runs the GPU tests without pytest-qt; keep its ini key known there
    try:
        import pytestqt  # noqa: F401
    except ImportError:
        parser.addini("qt_api", "Qt binding for pytest-qt (unused without it)")


def _gpu_reason() -> str | None:
    from gemmscope.kernels.gpu import get_cupy

    _cp, reason = get_cupy()
    return reason


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a CUDA GPU: {reason}")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)
