"""The words of the warp-specialized picture (tiling_pipeline.py) that follow from the
level's model alone: the producer's registers, the ring's caption and legend, a stage's
head and lamp, what a consumer warpgroup does. The texts that also follow the selected SM
and its walk of tiles stay with the scene."""

from __future__ import annotations

from ...kernels.models import (
    STAGING_COLS,
    ConsumerView,
    PromoteOp,
    StageState,
    StageView,
    WarpSpecialized,
    WgmmaOp,
    Work,
)

RING_LEGEND = "sN TtKk: tile t, K step k\nF: full[s] done, E: arrivals on empty[s]"


def producer_details(m: WarpSpecialized) -> str:
    return f"warps 0-3, {m.producer_regs} registers (setmaxnreg)"


def ring_caption(m: WarpSpecialized) -> str:
    return f"stages: A {m.bm}x{m.bk} + Bt {m.bn}x{m.bk}"


def operands(m: WarpSpecialized) -> str:
    """The zoom's caption of its A and Bt strips."""
    return f"A {m.bm}x{m.bk}\nBt {m.bn}x{m.bk}\n(K across)"


def stage_head(view: StageView) -> str:
    head = f"s{view.stage}"
    if view.iteration is not None and view.state is not StageState.EMPTY:
        head += f" T{(view.tile or 0) + 1}K{(view.k_step or 0) + 1}"
    return head


def lamp(m: WarpSpecialized, view: StageView) -> str:
    """The stage's barriers: full[s] done or not, and the arrivals on empty[s] of the
    barrier's count (a consumer warpgroup that frees the stage brings its share: fp8_deep's
    four warps, each on both CTAs of a cluster)."""
    full = view.state in (StageState.FULL, StageState.CONSUMING)
    arrived = view.empty_arrivals if view.state is StageState.EMPTY else 0
    share = m.empty_count // m.consumers
    return f"F{'●' if full else '○'} E{arrived * share}/{m.empty_count}"


def consumer_text(m: WarpSpecialized, c: int, view: ConsumerView,
                  op: WgmmaOp | PromoteOp | None) -> tuple[str, str]:
    """(what consumer ``c`` does now, under its name; its rows and warps, and the rest of
    what it does) for its box."""
    rows = m.consumer_rows(c)
    if view.work is Work.WAIT:
        what = f"waits on full[{view.stage}]"
    elif view.work is Work.EPILOGUE:
        what = (f"epilogue: cols {view.op * STAGING_COLS}-"
                f"{(view.op + 1) * STAGING_COLS - 1}\nst.shared → TMA store")
    elif view.work is Work.DONE:
        what = "done"
    elif isinstance(op, PromoteOp):
        what = (f"promote (FP32 FMAs)\nacc += tmp·sa·sb\ncols {op.c.col}-"
                f"{op.c.col + op.c.cols - 1}")
    else:
        assert isinstance(op, WgmmaOp)
        n_mma = sum(isinstance(o, WgmmaOp) for o in m.wgmma_ops(c, 0))
        what = (f"wgmma {op.shape}\n{view.op + 1} of {len(m.wgmma_ops(c, 0))} "
                f"({n_mma} wgmma) ← s{view.stage}\nk {op.a.col}-"
                f"{op.a.col + op.a.cols - 1}, cols {op.c.col}-{op.c.col + op.c.cols - 1}")
    parts = what.split("\n")
    head = "\n".join([f"WG {c + 1}: consumer {c}", *parts[:2]])
    details = [*parts[2:], f"rows {rows.row}-{rows.row + rows.rows - 1}, warps "
               f"{4 * (c + 1)}-{4 * (c + 1) + 3}"]
    return head, "\n".join(details)
