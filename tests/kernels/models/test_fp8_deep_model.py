"""fp8_deep's access model where C is staged box by box (EPC 1, the shape rule's form at
8192^3): the ring of three 32 x 64 boxes a warpgroup, each box written once by the two
warps whose rows it holds, without bank conflicts, and stored by one TMA box; the same
counts in the compiled kernel."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.fp8_deep_level import SCALE_STAGE_BYTES, deep_smem
from gemmscope.kernels.models import model_for
from gemmscope.kernels.models.level_model import Op

FORM = registry.get("fp8_deep").for_shape(8192, 8192, 8192, 132).params


def test_the_8192_cubed_form_stages_c_in_three_boxes_a_warpgroup_beside_four_stages():
    m = model_for("fp8_deep", FORM)
    assert (FORM["EPC"], FORM["STAGES"], FORM["BN"]) == (1, 4, 128)
    assert m.epc == 1 and m.c_bytes == 3 * 32 * 64 * 2
    # the model's layout is the host's: stages, both warpgroups' boxes, the scales, 1 KB
    assert m.sc_base + m.stages * SCALE_STAGE_BYTES + 1024 == deep_smem(FORM)


def test_each_warps_box_stores_cover_its_rows_once_without_bank_conflicts():
    m = model_for("fp8_deep", FORM)
    stores = {w: m.epilogue_accesses(w) for w in range(4, 8)}  # the first consumer's warps
    assert all(a.op is Op.STORE and a.banks().conflicts == 0 for s in stores.values()
               for a in s)
    # every (sub-tile, row, column pair) of the warpgroup's 128 x BN written exactly once
    seen = np.zeros((2, 64, m.bn // 2), int)
    for w, accesses in stores.items():
        r = (w % 4) * 16 + np.arange(32) // 4
        for a in accesses:
            sub = int(a.label.split("sub-tile ")[1][0])
            col0 = int(a.label.split("cols ")[1].split("+")[0])
            rows = r + (8 if "rows r+8" in a.label else 0)
            np.add.at(seen, (sub, rows, (col0 + 2 * (np.arange(32) % 4)) // 2), 1)
    assert (seen == 1).all()


def test_the_boxes_go_round_a_ring_of_three_and_cover_the_warpgroups_rows():
    m = model_for("fp8_deep", FORM)
    boxes = m.tma_stores(0, 4096, 4096)
    assert len(boxes) == 2 * (m.bn // 64) * 2
    assert [b.stage for b in boxes[:4]] == [0, 1, 2, 0]
    assert {(b.rows, b.cols) for b in boxes} == {(32, 64)}
    cover = {(b.row + r, b.col + c) for b in boxes for r in (0, 31) for c in (0, 63)}
    assert min(cover) == (0, 0) and max(cover) == (127, m.bn - 1)


@pytest.mark.skipif(importlib.util.find_spec("cuda") is None, reason="the nvrtc extra is missing")
def test_the_kernel_stores_c_as_the_model_says():
    from gemmscope.kernels.toolchain import nvrtc, sass

    m = model_for("fp8_deep", FORM)
    built = nvrtc.compile_offline(registry.get("fp8_deep").with_params(FORM))
    (text,) = sass.disassemble(built.cubin).values()
    ops: dict[str, int] = {}
    for ln in sass.parse(text):
        ops[ln.mnemonic] = ops.get(ln.mnemonic, 0) + 1
    # each box's stores are in the code once; the two warps of its half run them
    assert ops.get("STS", 0) == len(m.epilogue_accesses(4)) + len(m.epilogue_accesses(6))
    assert ops.get("UTMASTG.2D", 0) == len(m.tma_stores(0, 4096, 4096))
