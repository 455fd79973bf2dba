"""fp8_deep's 2-CTA form as compiled (NVRTC for sm_90a and nvdisasm here, no GPU): a
consumer warp frees a stage on both CTAs with one arrival instruction (lanes 0 and 1, each
on one CTA's barrier), so the K loop has as many barrier operations as the one-CTA form's
and no divergent branch to reconverge. A lane's local then remote arrival in a branch on
the peer (16 barrier operations a round of the ring and four BSSY/BSYNC pairs) cost the
2-CTA form 3-8% on an H100 (docs/perf-notes.md, stretch 29)."""

from __future__ import annotations

import collections

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import build_event, nvrtc, sass

MISSING = build_event.nvrtc_missing() or sass.nvdisasm_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def ops(shape: tuple[int, int, int], given: dict[str, int],
        loop_only: bool) -> collections.Counter[str]:
    """The instructions by mnemonic of fp8_deep built as a plain run of ``shape`` is, with
    the parameters ``given`` over the shape rule's: the K loop's or the whole kernel's."""
    level = registry.get("fp8_deep").for_shape(*shape, 132)
    built = nvrtc.compile_offline(level, params={**level.params, **given})
    (text,) = sass.disassemble(built.cubin).values()
    lines = sass.parse(text)
    if loop_only:
        lines = sass.in_span(lines, sass.main_loop(text))
    return collections.Counter(ln.mnemonic.split(".")[0] for ln in lines if ln.counted)


def k_loop_ops(cl: int) -> collections.Counter[str]:
    return ops((8192, 8192, 8192), {"CL": cl}, loop_only=True)


def test_the_2_cta_form_frees_a_stage_on_both_ctas_with_one_arrival_and_no_divergence():
    one, two = k_loop_ops(1), k_loop_ops(2)
    assert two["QGMMA"] == one["QGMMA"] > 0  # the same round of the ring
    assert two["SYNCS"] == one["SYNCS"], "one barrier operation per wait and per release"
    assert two["BSSY"] == two["BSYNC"] == 0, "no branch on the peer in the K loop"


def kernel_ops(shape: tuple[int, int, int], ks: int | None = None) -> collections.Counter[str]:
    """The whole kernel's, its K blocks compiled in (the shape rule's KS) or KS = ``ks``."""
    return ops(shape, {} if ks is None else {"KS": ks}, loop_only=False)


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (4096, 2112, 7168)])
def test_the_build_per_k_branches_and_waits_less_than_k_read_at_run_time(shape):
    """4096^3: 32 K blocks on three stages, a last round that passes one; 4096 x 2112 x
    7168: 56 on four, whole rounds. With K compiled in, the last round's other forms are
    gone (docs/perf-notes.md, round 18: 298 -> 241 branches at 4096^3, 283 -> 181 at N =
    2112), and the count of rounds kept from the compiler spills nothing."""
    per_k, run_time = kernel_ops(shape), kernel_ops(shape, ks=0)
    assert per_k["BRA"] < run_time["BRA"]
    assert per_k["SYNCS"] < run_time["SYNCS"]
    assert 0 < per_k["QGMMA"] <= run_time["QGMMA"]
    assert per_k["STL"] == per_k["LDL"] == 0, "no spill"
