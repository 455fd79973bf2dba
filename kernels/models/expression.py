"""A user's own swizzle, typed as an integer expression: the swizzle's grammar of the one
safe expression reader (``ladder/expression.py``), evaluated over whole tiles at once.

Allowed: integer constants, the names in ``NAMES`` and the operators
``^ & | << >> + - * // %`` (and unary minus), in int64 arithmetic as on the GPU (a value
that overflows wraps). Nothing is passed to ``eval``. A bad expression raises
:class:`ExpressionError` with a message meant for the user.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..ladder.expression import Expression, ExpressionError, Grammar, parse

__all__ = ["NAMES", "ColumnExpression", "ExpressionError", "parse_column_expression"]

NAMES = ("row", "col", "addr", "width")
MAX_SHIFT = 62


def _int64(f: Callable[[np.ndarray, np.ndarray], np.ndarray], op: type[ast.operator]
           ) -> Callable[[object, object], np.ndarray]:
    def apply(a: object, b: object) -> np.ndarray:
        left, right = np.asarray(a, np.int64), np.asarray(b, np.int64)
        if op in (ast.LShift, ast.RShift) and (np.any(right < 0) or np.any(right > MAX_SHIFT)):
            raise ExpressionError(f"shift by {int(np.max(np.abs(right)))} is out of range "
                                  f"(0 to {MAX_SHIFT})")
        if op is ast.FloorDiv and np.any(right == 0):
            raise ExpressionError("division by zero")
        if op is ast.Mod and np.any(right == 0):
            raise ExpressionError("modulo by zero")
        with np.errstate(over="ignore"):
            return f(left, right)
    return apply


_OPERATORS: dict[type[ast.operator], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Add: operator.add,
    ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
COLUMN = Grammar(operators={op: _int64(f, op) for op, f in _OPERATORS.items()}, calls={},
                 example="col ^ (row % 8)")


@dataclass(frozen=True, slots=True)
class ColumnExpression:
    """``text`` gives the physical column of element (row, col); names: row, col,
    addr (= row * width + col, the logical element offset) and width (elements per row)."""

    expression: Expression
    width: int

    @property
    def text(self) -> str:
        return self.expression.text

    def __call__(self, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        r = np.asarray(row, np.int64)
        c = np.asarray(col, np.int64)
        env = {"row": r, "col": c, "addr": r * self.width + c, "width": np.int64(self.width)}
        return np.broadcast_to(np.asarray(self.expression(env), np.int64), r.shape)


def parse_column_expression(text: str, width: int) -> ColumnExpression:
    expr = ColumnExpression(parse(text, NAMES, COLUMN), width)
    # one trial evaluation, so errors such as a negative shift show up now
    probe = np.arange(8)
    expr(probe[:, None] + np.zeros((1, width), np.int64), np.arange(width)[None, :]
         + np.zeros((8, 1), np.int64))
    return expr
