"""Integer expressions of a kernel spec (launch grid, block, dynamic shared memory, rules),
parsed and evaluated safely.

A spec says ``grid = ["ceil_div(N, BN)", "ceil_div(M, BM)"]``: text from a file the user
wrote. It is parsed with :mod:`ast` and evaluated by walking the tree; nothing is passed
to ``eval`` or ``exec``. Allowed: whole-number constants, the names the spec declares
(M, N, K and its parameters), ``+ - * // %``, unary minus, parentheses, and the calls
``min(a, b, ...)``, ``max(a, b, ...)`` and ``ceil_div(a, b)``. Anything else (attributes,
subscripts, other calls, keywords, ``**``, ``/``, comparisons) is refused when the spec is
read, with a message naming what was found. Values are bounded: an intermediate result
beyond ``MAX_MAGNITUDE`` is refused rather than grown without end.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

MAX_LENGTH = 200  # characters of one expression
MAX_NODES = 100  # nodes of its tree
MAX_MAGNITUDE = 1 << 62  # no intermediate value beyond this (an int64 stays exact)
FUNCTIONS = ("min", "max", "ceil_div")
SHAPE_NAMES = ("M", "N", "K")


class ExpressionError(ValueError):
    """An expression that cannot be read or evaluated; ``str()`` says why, for the user."""


def ceil_div(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("ceil_div by zero")
    return -(-a // b)


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("division by zero")
    return a // b


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise ExpressionError("modulo by zero")
    return a % b


_CALLS: dict[str, Callable[..., int]] = {"min": min, "max": max, "ceil_div": ceil_div}
_ARITY = {"min": (2, 16), "max": (2, 16), "ceil_div": (2, 2)}  # least, most arguments
_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b, ast.FloorDiv: _floordiv, ast.Mod: _mod,
}
_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Div: "/", ast.Pow: "**", ast.BitXor: "^", ast.BitAnd: "&", ast.BitOr: "|",
           ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}


@dataclass(frozen=True, slots=True)
class Expression:
    """One checked expression; call it with the values of its names."""

    text: str
    tree: ast.Expression
    names: frozenset[str]  # the names it uses

    def __call__(self, env: Mapping[str, int]) -> int:
        missing = sorted(self.names - set(env))
        if missing:
            raise ExpressionError(f"{self.text!r} needs {', '.join(missing)}")
        return _eval(self.tree.body, env)

    def __str__(self) -> str:
        return self.text


def parse_expression(text: object, allowed: Iterable[str]) -> Expression:
    """Parse ``text`` (a str, or an int taken as its decimal text) into an Expression
    over the names ``allowed``; raises ExpressionError saying what is wrong."""
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise ExpressionError(f"an expression is a string or a whole number, not "
                              f"{type(text).__name__}")
    text = str(text).strip()
    if not text:
        raise ExpressionError("the expression is empty")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"{text!r} is not an expression (column {exc.offset}: "
                              f"{exc.msg})") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise ExpressionError(f"{text!r} has {nodes} parts; at most {MAX_NODES}")
    names: set[str] = set()
    _check(tree.body, frozenset(allowed), names, text)
    return Expression(text, tree, frozenset(names))


def _check(node: ast.AST, allowed: frozenset[str], names: set[str], text: str) -> None:
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            sym = _SYMBOL.get(type(node.op), type(node.op).__name__)
            hint = " (use // for whole-number division)" if isinstance(node.op, ast.Div) else ""
            raise ExpressionError(f"operator {sym} is not allowed in {text!r}{hint}; "
                                  "use + - * // %")
        _check(node.left, allowed, names, text)
        _check(node.right, allowed, names, text)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.USub | ast.UAdd):
            raise ExpressionError(f"only unary minus is allowed in {text!r}")
        _check(node.operand, allowed, names, text)
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise ExpressionError(f"{node.id} is a function in {text!r}: call it, "
                                  f"{node.id}(a, b)")
        if node.id not in allowed:
            raise ExpressionError(f"unknown name {node.id!r} in {text!r}; known: "
                                  f"{', '.join(sorted(allowed))}")
        names.add(node.id)
    elif isinstance(node, ast.Constant):
        if type(node.value) is not int:
            raise ExpressionError(f"only whole-number constants are allowed in {text!r}, "
                                  f"not {node.value!r}")
        if abs(node.value) > MAX_MAGNITUDE:
            raise ExpressionError(f"the constant {node.value} in {text!r} is too large")
    elif isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise ExpressionError(f"only the calls {', '.join(FUNCTIONS)} are allowed in "
                                  f"{text!r}")
        if node.keywords:
            raise ExpressionError(f"{node.func.id}() takes no keywords in {text!r}")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise ExpressionError(f"{node.func.id}() takes no *arguments in {text!r}")
        count, least, most = len(node.args), *_ARITY[node.func.id]
        if not least <= count <= most:
            takes = f"{least}" if least == most else f"at least {least}"
            raise ExpressionError(f"{node.func.id} takes {takes} arguments, not {count}, "
                                  f"in {text!r}")
        for arg in node.args:
            _check(arg, allowed, names, text)
    else:
        raise ExpressionError(f"{type(node).__name__} is not allowed in an expression "
                              f"({text!r})")


def _bounded(v: int) -> int:
    if abs(v) > MAX_MAGNITUDE:
        raise ExpressionError(f"a value reaches {v:.3g}, beyond the bound of 2^62")
    return v


def _eval(node: ast.AST, env: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant):
        assert type(node.value) is int  # _check admits whole numbers only
        return node.value
    if isinstance(node, ast.Name):
        return _bounded(int(env[node.id]))
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # _check admits named calls only
        args = [_eval(a, env) for a in node.args]
        call = _CALLS[node.func.id]
        return _bounded(call(*args))
    assert isinstance(node, ast.BinOp)  # _check admits nothing else
    left, right = _eval(node.left, env), _eval(node.right, env)
    return _bounded(_BINOPS[type(node.op)](left, right))
