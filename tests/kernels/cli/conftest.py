"""Fixtures of the command line's tests."""

from __future__ import annotations

import shutil

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import nvrtc


@pytest.fixture
def cuda(tmp_path, monkeypatch):
    """A copy of kernels/cuda the registry and the build read, so a test can edit a level."""
    folder = tmp_path / "cuda"
    shutil.copytree(registry.cuda_dir(), folder)
    monkeypatch.setattr(registry, "cuda_dir", lambda: folder)
    monkeypatch.setattr(nvrtc, "cuda_dir", lambda: folder)
    return folder
