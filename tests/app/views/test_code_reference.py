"""The Code view of a reference: the kernel its library ran (a library_kernel event, as
`record --ncu` writes it through the ncu stand-in) shown like a level's build: name,
launch geometry, resources, SASS with its per-line counters; and, where the recording
has no such event or ncu gave nothing, a plain sentence saying so."""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path

import fake_ncu
import fed_store
import pytest
import synthetic_session as syn

from gemmscope.app.core import library_build
from gemmscope.app.core.store import SessionStore
from gemmscope.kernels.profile import ncu_reference as nr

BUNDLED = resources.files("gemmscope.resources") / "sessions" / "h200-ladder.jsonl.gz"


@pytest.fixture(scope="module")
def events():
    return [e for e in syn.file_events(BUNDLED) if e["type"] not in ("library_kernel",)]


def profiled(tmp_path: Path, mode: str = "ok") -> list[dict]:
    """What record --ncu's reference step emits for cublas_fp32 with the stand-in ncu."""
    exe = fake_ncu.write_fake_ncu(tmp_path / "ncu", mode=mode)
    out: list[dict] = []
    step = nr.ReferenceKernelsStep(["cublas_fp32"], str(exe), (1024, 1024, 1024), 60,
                                   io.StringIO())
    step(lambda: 1e6, out.append)
    return [e for e in out if e["type"] != "info"]


def fed(events, extra) -> SessionStore:
    return fed_store.fed(events, *extra)


def test_a_reference_shows_its_library_kernel_like_a_level(code_view, events, tmp_path):
    made = profiled(tmp_path)
    store = fed(events, made)
    v = code_view(store, "cublas_fp32")
    lk = store.library_kernels["cublas_fp32"]
    gemm = fake_ncu.LIBRARY_KERNELS[1]["Kernel Name"]
    assert lk.kernel == gemm
    notice = v.notice.text()
    assert gemm in notice and "grid 132×1×1" in notice and "block 384×1×1" in notice
    launch = v.occupancy.text()
    assert f"{lk.regs} registers per thread" in launch
    assert f"{lk.smem_dynamic_bytes:,} B dynamic" in launch
    assert "the call launched 2 kernels" in launch
    assert library_build.short(fake_ncu.LIBRARY_KERNELS[0]["Kernel Name"]) in launch
    assert "executed (warp instructions" in launch
    # its SASS, every instruction of the profiled kernel, with the counters placed on it
    assert len(v.kernel_lines()) == lk.sass.count("*/ ")
    assert v.sass.lines and v.heat is not None and v.heat.reason is None
    assert library_build.NO_SOURCE in v.source.toPlainText()


def test_a_reference_without_a_profile_says_record_ncu(code_view, events):
    v = code_view(fed(events, []), "cublas_fp32")
    for text in (v.notice.text(), v.source.toPlainText(), v.occupancy.text()):
        assert "no profile of the kernel its library ran" in text
        assert "record --ncu" in text


def test_a_failed_profile_shows_its_reason_in_every_panel(code_view, events, tmp_path):
    store = fed(events, profiled(tmp_path, mode="fail"))
    v = code_view(store, "cublas_fp32")
    assert "refused" in v.notice.text() and "ERR_NVGPUCTRPERM" in v.notice.text()
    assert "nothing of its kernel was recorded" in v.occupancy.text()
    assert "ERR_NVGPUCTRPERM" in v.sass.toPlainText()


def test_a_level_keeps_its_own_build(code_view, events, tmp_path):
    store = fed(events, profiled(tmp_path))
    v = code_view(store, "register_2d")
    assert v.library_kernel() is None and v.build is store.build_for("register_2d")
