"""On the H200 with Nsight Compute: `record --ncu-source`'s profile of a level gives a
source page this reader reads, whose instructions are the build event's at the same
offsets, and whose per-line shared-memory wavefronts add up to the access model's.

The wavefronts ncu attributes to the kernel's own shared-memory instructions equal the
model's in either launch (docs/perf-notes.md); the excess on the shared loads is checked
against the model's load conflicts. Skipped without a GPU or ncu.
"""

from __future__ import annotations

import shutil

import pytest

from gemmscope.app.core.source_heat import agreement_problem, mnemonic
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import totals
from gemmscope.kernels.profile import ncu_source_step
from gemmscope.kernels.protocol import records as rec
from gemmscope.kernels.protocol import source_counters as sc
from gemmscope.kernels.protocol.decoding import decode, of
from gemmscope.kernels.protocol.events import dumps
from gemmscope.kernels.toolchain import build_event

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(shutil.which("ncu") is None, reason="ncu is not on PATH")]

SIZE = 1024


def sm_count() -> int:
    import cupy as cp

    return int(cp.cuda.Device().attributes["MultiProcessorCount"])


def profiled(level_id: str) -> rec.SourceCounters:
    """The event as a recording holds it: written, then read by the one decoder."""
    out = ncu_source_step.profile("ncu", level_id, SIZE, SIZE, SIZE,
                                  files=ncu_source_step.source_files(level_id))
    assert out.status is sc.Status.OK, f"{out.status}: {out.reason}"
    event = decode(dumps(ncu_source_step.event(level_id, SIZE, SIZE, SIZE, out, 0.0,
                                               ncu_source_step.tool_version("ncu"))))
    assert isinstance(event, rec.SourceCounters)
    return event


@pytest.mark.parametrize("level_id", ["register_2d", "cp_async", "wmma", "wgmma_tma"])
def test_the_page_is_read_and_lines_up_with_the_build(level_id):
    ev = profiled(level_id)
    assert ev.lines and ev.lines_total >= len(ev.lines)
    assert set(ncu_source_step.COLUMNS) <= set(ev.columns)
    assert ev.totals["stall_samples"] > 0 and ev.tool_version
    assert any(row.source for row in ev.lines)  # the cuda,sass page was read
    # the level as this shape launches it (wgmma_tma picks 232-wide tiles at 1024^3)
    level = registry.get(level_id).for_shape(SIZE, SIZE, SIZE, sm_count())
    build = build_event.offline_event(level, ev.variant, isolated=True)
    assert agreement_problem(ev.lines, of({"t": 0.0, **build})) is None


@pytest.mark.parametrize("level_id", ["smem_tiled", "register_2d", "vectorized", "cp_async"])
def test_per_line_shared_wavefronts_add_up_to_the_model(level_id):
    ev = profiled(level_id)
    model = totals(level_id, SIZE, SIZE, SIZE)

    def total(op: str, field: str) -> int:
        return sum(getattr(row, field) or 0 for row in ev.lines
                   if mnemonic(row.sass).split(".")[0] == op)

    assert total("LDS", "smem_wavefronts") == model.ld.wavefronts
    assert total("STS", "smem_wavefronts") == model.st.wavefronts
    assert total("LDS", "smem_excess_wavefronts") == model.ld.conflicts
