"""What fp8_deep's block scales cost (issue 42): two diagnostic copies of the level's kernel
source, each in its own folder, to time beside the level with
``fp8_side_by_side.py --no-check --variant 'fp8_deep NP={}' --variant-source 'fp8_deep NP=DIR/np'``
(their C is wrong for block-scaled operands by design: never a level).

- ``np/``: no promotion. Each K block's two wgmma groups accumulate into the tile's sums
  directly (one commit and one wait a K block); the consumers read no scales and run no
  FFMA; the producer still brings the scales with each stage.
- ``ns/``: the same, and the producer brings no scales (SCT 1: neither the row scales' TMA
  box nor the Bt scales' cp.async): a stage of A and Bt alone, as a per-tensor kernel's.

    python3 benchmarks/attempts/fp8_deep_noscale.py DIR

The copies are made from the level's file as it is (``kernels/cuda/fp8_deep.cu``); a change
there that moves the text they replace makes this script stop with the text it missed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

LEVEL_SOURCE = Path(__file__).resolve().parents[2] / "kernels" / "cuda" / "fp8_deep.cu"

# the consumers' K block from its scale loads to the end of its promotion, replaced by one
# group of both sub-tiles' wgmmas into the sums themselves
K_BLOCK_FROM = "                const unsigned sc = q_sa + s * SA_STRIDE;"
K_BLOCK_TO = "            auto pass = [&](int s) {  // a stage past K: passed on"
NO_PROMOTION = """\
                (void)q_sa; (void)q_sb; (void)tmp;
                const unsigned long long db = gs_wgmma_desc_sw128(b_base + s * B_BYTES);
                gs_fence_regs(acc[0]);
                gs_fence_regs(acc[1]);
                gs_wgmma_fence();
#pragma unroll
                for (int w = 0; w < 2; ++w) {
                    const unsigned long long da =
                        gs_wgmma_desc_sw128(a_base + s * A_BYTES + (c * 128 + w * 64) * BK);
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk)
                        GsDpWgmma<BN>::run(acc[w], da + 2 * kk, db + 2 * kk,
                                           (gs_k > 0 || kk > 0) ? 1 : 0);
                }
                gs_wgmma_commit();
                gs_wgmma_wait<0>();
                gs_fence_regs(acc[0]);
                gs_fence_regs(acc[1]);
                release(s);
            };
"""
# the producer's scale copies (SCT 1), for ns/
NO_SCALE_LOADS = (
    ("gs_mbar_arrive_expect_tx(&full[s], A_BYTES + B_BYTES + (SCT ? 1024 : 0));",
     "gs_mbar_arrive_expect_tx(&full[s], A_BYTES + B_BYTES);"),
    ("if constexpr (SCT) gs_tma_load_2d(sc_base + 256 * s, &tmS, &full[s], bm * BM, ks);", ""),
    ("gs_cp_async4(sb_base + 4 * s + lane, b_ok ? pb + ks : scale_b, b_ok);", ""),
)


def _once(text: str, old: str) -> None:
    if text.count(old) != 1:
        raise SystemExit(f"{LEVEL_SOURCE.name}: expected once, found {text.count(old)} "
                         f"times: {old.strip()[:70]!r}")


# PP (tiles of at most 88 columns: a second set of temporaries, a wgmma group kept queued)
# is a K block of its own with the same promotion: the copies take it out, so every shape
# runs the plain K block they replace
PP_ON = "constexpr bool PP = 4 * R <= 176 && RING == 0;"
PP_OFF = "constexpr bool PP = false;  // a diagnostic copy: the plain K block only"
PP_BLOCK_FROM = "            // PP's K block in stage s"
PLAIN_CALL = " " * 12 + "gs_dp_tile_blocks<STAGES, RING>(rounds, tail, ring, uses, kblock, pass);\n"
PP_CALL_FROM = " " * 12 + "if constexpr (PP) {\n" + \
    " " * 16 + "for (int r = 0; r < rounds; ++r, ++uses) {"
PP_CALL_TO = " " * 12 + "} else {\n    " + PLAIN_CALL + " " * 12 + "}\n"


def without_pp(source: str) -> str:
    """The level's source with PP's K block and its call taken out (a source without PP
    as it is)."""
    if PP_ON not in source:
        return source
    for text in (PP_ON, PP_BLOCK_FROM, PP_CALL_FROM, PP_CALL_TO, K_BLOCK_TO):
        _once(source, text)
    source = source.replace(PP_ON, PP_OFF)
    a, b = source.index(PP_BLOCK_FROM), source.index(K_BLOCK_TO)
    source = source[:a] + source[b:]
    a = source.index(PP_CALL_FROM)
    b = source.index(PP_CALL_TO) + len(PP_CALL_TO)
    return source[:a] + PLAIN_CALL + source[b:]


def no_promotion(source: str) -> str:
    source = without_pp(source)
    _once(source, K_BLOCK_FROM)
    _once(source, K_BLOCK_TO)
    a, b = source.index(K_BLOCK_FROM), source.index(K_BLOCK_TO)
    return source[:a] + NO_PROMOTION + source[b:]


def no_scale_loads(source: str) -> str:
    for old, new in NO_SCALE_LOADS:
        _once(source, old)
        source = source.replace(old, new)
    return source


def write(folder: Path, source: str | None = None) -> dict[str, Path]:
    """The two copies under ``folder`` (np/, ns/), by label."""
    text = LEVEL_SOURCE.read_text(encoding="utf-8") if source is None else source
    forms = {"np": no_promotion(text)}
    forms["ns"] = no_scale_loads(forms["np"])
    out = {}
    for label, body in forms.items():
        (folder / label).mkdir(parents=True, exist_ok=True)
        out[label] = folder / label / LEVEL_SOURCE.name
        out[label].write_text(body, encoding="utf-8")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    for label, path in write(ap.parse_args().folder).items():
        print(f"{label}: {path}")


if __name__ == "__main__":
    main()
