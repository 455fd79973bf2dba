"""Result rows and their texts: the ladder table's rows, printed tables, the report of a
recording and the CLI's progress line. No GPU, no Qt (the app shows these rows).

The face (``__all__``) is what the app may use, loaded name by name at first use
(``kernels/faces.py``); the rest of the GPU side imports the modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = [
    "BASELINE_COLUMNS",
    "DASH",
    "MINUS",
    "MIX_TITLE",
    "NOT_THROTTLED",
    "NOT_VERIFIED",
    "NUMBER_COLUMNS",
    "THROTTLE_COLUMNS",
    "UNPAIRED",
    "Cell",
    "Column",
    "Pair",
    "Point",
    "Result",
    "ResultKey",
    "Roof",
    "Row",
    "RunFacts",
    "SweepGrid",
    "axis_span",
    "baseline_cell",
    "baseline_rows",
    "broken_roofs",
    "counted",
    "facts_of",
    "gflop_per_j_text",
    "intensity",
    "markdown_table",
    "measured_dram_bytes",
    "mhz_text",
    "mix_of",
    "mix_text",
    "ms_text",
    "newest",
    "not_run_texts",
    "params_ran",
    "pct_interval_text",
    "pct_text",
    "per_ghz_text",
    "point",
    "reference_key",
    "rel_err_text",
    "resolved",
    "result_key",
    "roofs",
    "run_facts",
    "sustained_ratio",
    "sustained_texts",
    "sweep_grid_of",
    "tflops_short",
    "tflops_text",
    "verdict_text",
    "warning",
]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .baseline import Pair, RunFacts, facts_of, mix_of, mix_text, run_facts, warning
    from .baseline_report import COLUMNS as BASELINE_COLUMNS
    from .baseline_report import MIX_TITLE
    from .baseline_report import cell as baseline_cell
    from .baseline_report import rows as baseline_rows
    from .counts import counted
    from .number_texts import MINUS, NOT_THROTTLED
    from .power_limit import sustained_ratio, sustained_texts
    from .roofline import (
        Point,
        Roof,
        axis_span,
        broken_roofs,
        intensity,
        measured_dram_bytes,
        point,
        roofs,
    )
    from .rows import (
        DASH,
        NOT_VERIFIED,
        NUMBER_COLUMNS,
        THROTTLE_COLUMNS,
        UNPAIRED,
        Column,
        Result,
        ResultKey,
        Row,
        gflop_per_j_text,
        mhz_text,
        ms_text,
        newest,
        not_run_texts,
        params_ran,
        pct_interval_text,
        pct_text,
        per_ghz_text,
        reference_key,
        rel_err_text,
        resolved,
        result_key,
        tflops_short,
        tflops_text,
        verdict_text,
    )
    from .sweep_grid import Cell, SweepGrid
    from .sweep_grid import sweep_grid as sweep_grid_of
    from .table import markdown_table
else:
    __getattr__, __dir__ = lazy(__name__, {
        "baseline": ("Pair", "RunFacts", "facts_of", "mix_of", "mix_text", "run_facts",
                     "warning"),
        "baseline_report": ("BASELINE_COLUMNS=COLUMNS", "MIX_TITLE", "baseline_cell=cell",
                            "baseline_rows=rows"),
        "roofline": ("Point", "Roof", "axis_span", "broken_roofs", "intensity",
                     "measured_dram_bytes", "point", "roofs"),
        "rows": ("Column", "DASH", "NOT_VERIFIED", "NUMBER_COLUMNS",
                 "Result", "ResultKey", "Row", "THROTTLE_COLUMNS", "UNPAIRED",
                 "gflop_per_j_text", "mhz_text", "ms_text", "newest", "not_run_texts",
                 "params_ran", "pct_interval_text", "pct_text", "per_ghz_text",
                 "reference_key", "rel_err_text", "resolved", "result_key", "tflops_short",
                 "tflops_text", "verdict_text"),
        "number_texts": ("MINUS", "NOT_THROTTLED"),
        "power_limit": ("sustained_ratio", "sustained_texts"),
        "counts": ("counted",),
        "sweep_grid": ("Cell", "SweepGrid", "sweep_grid_of=sweep_grid"),
        "table": ("markdown_table",),
    })
