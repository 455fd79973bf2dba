"""A count says its noun in the singular for one: "1 line", never "1 lines". The rule is
kernels/results/counts.py's counted(); the sources are scanned for a count written into a
plural by hand (an f-string "{n} lines"), which is the class of "1 lines"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gemmscope.kernels.results.counts import counted

ROOT = Path(__file__).resolve().parents[3]
NOUNS = ("line", "phase", "level", "run", "message", "event", "sample", "repeat", "GPU", "kernel",
         "file", "scene", "result", "sector", "error", "warning", "byte", "pair", "row",
         "trial", "step", "lane", "column", "build", "probe", "launch", "entry")
PLURALS = "|".join(sorted({"entries" if n == "entry" else "launches" if n == "launch"
                           else n + "s" for n in NOUNS}))
BY_HAND = re.compile(r"\{([^{}]+)\} (?:earlier )?(" + PLURALS + r")\b")


@pytest.mark.parametrize(("n", "noun", "text"), [
    (1, "line", "1 line"), (0, "line", "0 lines"), (2, "line", "2 lines"),
    (1, "GPU", "1 GPU"), (2, "GPU", "2 GPUs"), (1, "entry", "1 entry"),
    (3, "entry", "3 entries"), (12_345, "byte", "12,345 bytes"),
    (1, "earlier message", "1 earlier message")])
def test_a_count_of_one_is_singular(n, noun, text):
    assert counted(n, noun) == text


def never_one(expression: str, line: str, start: int) -> bool:
    """A count that cannot be one: a constant limit (MAX_BYTES), a size refused against a
    limit on the same line or the next ("over", "at most"), the end of a fraction
    ("3/{n} pairs"); or no count at all ("{prec.upper()} levels")."""
    name = expression.split(":")[0].strip()
    return (bool(re.fullmatch(r"[A-Za-z_.]*[A-Z_]{3,}[A-Z0-9_]*", name))
            or "MAX" in line or "at most" in line or "over " in line
            or line[max(0, start - 1):start] == "}" or name.endswith(".upper()"))


# where the program's messages, reports and labels are written (kernels/device and
# kernels/models, below kernels/results, word their errors against a limit only)
FOLDERS = ("app", "kernels/results", "kernels/cli", "kernels/profile", "kernels/toolchain")


def test_no_count_is_written_into_a_plural_by_hand():
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = path.read_text().splitlines()
            for number, line in enumerate(lines, 1):
                if line.lstrip().startswith("#"):
                    continue
                context = line + " " + (lines[number] if number < len(lines) else "")
                found += [f"{path.relative_to(ROOT)}:{number}: {m.group(0)}"
                          for m in BY_HAND.finditer(line)
                          if not never_one(m.group(1), context, m.start())]
    assert found == []
