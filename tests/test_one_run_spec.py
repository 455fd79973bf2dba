"""One run spec (issue 44 item 3), read from the source: a GEMM's FLOPs are written once
(``Shape.flops``), and a run's mode is named only through the one ``Mode`` enum."""

from __future__ import annotations

import ast
from pathlib import Path

import places

REPO = places.REPO
FOLDERS = ("kernels", "app", "benchmarks")
SHAPE_FILE = REPO / "kernels" / "ladder" / "shape.py"
ENUM_FILE = REPO / "kernels" / "protocol" / "events.py"


def sources() -> list[Path]:
    return [p for folder in FOLDERS for p in sorted((REPO / folder).rglob("*.py"))]


def _factors(node: ast.expr) -> list[ast.expr]:
    """The operands of a product a * b * c, flattened."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def flop_products(path: Path) -> list[int]:
    """Lines where 2·M·N·K is written out (a 2 times M, N and K, in any order)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
            continue
        factors = _factors(node)
        twos = [f for f in factors if isinstance(f, ast.Constant) and f.value == 2]
        names = sorted(n for f in factors if (n := _name(f)) is not None)
        if twos and names == ["K", "M", "N"]:
            lines.append(node.lineno)
    return sorted(set(lines))


def mode_literals(path: Path) -> list[int]:
    """Lines holding the string "burst" or "sustained" as a value (not in a comment or a
    longer text)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sorted({node.lineno for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and node.value in ("burst", "sustained")})


def test_the_flop_count_is_written_once_in_shape_flops():
    found = {str(p.relative_to(REPO)): lines for p in sources() if (lines := flop_products(p))}
    assert found == {"kernels/ladder/shape.py": found.get("kernels/ladder/shape.py", [])}
    assert len(found["kernels/ladder/shape.py"]) == 1  # in Shape.flops, nowhere else


def test_the_flop_finder_sees_the_forms_once_written_out(tmp_path):
    # what the engine and the roofline held before issue 44 (so the test above can fail)
    code = tmp_path / "x.py"
    code.write_text("flops = 2.0 * M * N * K\nf = 2 * self.M * self.N * self.K\n"
                    "g = tflops_of(2.0 * M * N * K, ms)\nbytes_ = 4 * M * N\n")
    assert flop_products(code) == [1, 2, 3]


def test_no_mode_literal_outside_the_mode_enum():
    found = {str(p.relative_to(REPO)): lines for p in sources()
             if p != ENUM_FILE and (lines := mode_literals(p))}
    assert found == {}
    assert mode_literals(ENUM_FILE)  # the enum itself names them (the finder sees them)
