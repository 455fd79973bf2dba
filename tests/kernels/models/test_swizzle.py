from __future__ import annotations

import numpy as np
import pytest

from gemmscope.kernels.models.expression import ExpressionError, parse_column_expression
from gemmscope.kernels.models.swizzle import (
    Pattern,
    Swizzle,
    SwizzleUnit,
    TileLayout,
    analyze_pattern,
    is_conflict_free,
)

ROW128_BYTES = TileLayout(row_elems=64, elem_bytes=2)  # 128-byte rows of fp16


def test_swizzle_formula_matches_cute():
    sw = Swizzle(3, 4, 3)
    assert sw.mask == 0b111 << 7
    # byte 16 * c of row r (128-byte rows) lands in chunk c ^ (r % 8)
    for r in range(16):
        for c in range(8):
            assert sw(r * 128 + c * 16) == r * 128 + ((c ^ (r % 8)) * 16)


def test_bad_swizzle_parameters_are_refused():
    with pytest.raises(ValueError):
        Swizzle(3, 4, 2)


def test_ldmatrix_on_128_byte_rows_conflicts_without_swizzle():
    rep = analyze_pattern(Pattern.LDMATRIX, ROW128_BYTES).report
    assert rep.n_way == 8 and rep.wavefronts == 32


def test_swizzle_343_on_128_byte_rows_makes_ldmatrix_conflict_free():
    layout = TileLayout(64, 2, swizzle=Swizzle(3, 4, 3), unit=SwizzleUnit.BYTE)
    rep = analyze_pattern(Pattern.LDMATRIX, layout).report
    assert (rep.wavefronts, rep.conflicts) == (4, 0)
    # the same swizzle on the element offsets of fp16 is Swizzle<3,3,3>
    assert is_conflict_free(Pattern.LDMATRIX,
                            TileLayout(64, 2, swizzle=Swizzle(3, 3, 3)))
    # and for one-byte elements (fp8) on 128-element rows it is Swizzle<3,4,3> itself
    assert is_conflict_free(Pattern.LDMATRIX,
                            TileLayout(128, 1, swizzle=Swizzle(3, 4, 3)))


def test_column_of_32_floats_padding_and_swizzle():
    plain = TileLayout(32, 4)
    assert analyze_pattern(Pattern.COLUMN, plain).report.n_way == 32
    assert is_conflict_free(Pattern.COLUMN, TileLayout(32, 4, pad_elems=1))
    assert is_conflict_free(Pattern.COLUMN, TileLayout(32, 4, swizzle=Swizzle(5, 0, 5)))
    assert is_conflict_free(Pattern.ROW, TileLayout(32, 4, swizzle=Swizzle(5, 0, 5)))


def test_typed_expression_matches_the_swizzle():
    expr = parse_column_expression("col ^ (row % 32)", 32)
    layout = TileLayout(32, 4, column_map=expr)
    assert is_conflict_free(Pattern.COLUMN, layout)
    r, c = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    ref = TileLayout(32, 4, swizzle=Swizzle(5, 0, 5))
    assert np.array_equal(layout.address(r, c), ref.address(r, c))
    assert layout.permutation_problem() is None


def test_expression_that_is_not_a_permutation_is_reported():
    layout = TileLayout(32, 4, column_map=parse_column_expression("col & 1", 32))
    assert layout.permutation_problem() == "two elements map to the same address"


@pytest.mark.parametrize("text, message", [
    ("", "type an expression"),
    ("col ^", "syntax error"),
    ("__import__('os').system('true')", "not allowed"),
    ("row.real", "not allowed"),
    ("foo ^ col", "unknown name 'foo'"),
    ("col ** 2", r"operator \*\* is not allowed"),
    ("col / 2", "operator / is not allowed"),
    ("col ^ 1.5", "whole-number constants"),
    ("col << -1", "shift by 1 is out of range"),
    ("col << 99", "out of range"),
    ("col % 0", "modulo by zero"),
    ("[col]", "List is not allowed"),
    ("col if row else 0", "IfExp is not allowed"),
    ("x" * 300, "longer than"),
    ("^".join(["1"] * 60), "parts"),
    ("col ^ " + "9" * 30, "too large"),
    ("min(col, row)", "calls are not allowed"),
])
def test_bad_expressions_get_a_message(text, message):
    with pytest.raises(ExpressionError, match=message):
        parse_column_expression(text, 32)
