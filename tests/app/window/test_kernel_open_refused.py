"""File ▸ Open kernel… (and --kernel) on a spec or source that is a device, a FIFO, nested
deep, or a source linked from outside the spec's folder: one line in the window's
messages, nothing read past its bound, no traceback, the window goes on."""

from __future__ import annotations

import os

import pytest

SPEC = """
[kernel]
id = "mine"
name = "my_gemm"
source = "mine.cu"
precision = "fp32"

[launch]
block = [256]
grid = ["ceil_div(N, 64)", "ceil_div(M, 64)"]
"""


def _case(tmp_path, case: str):
    spec = tmp_path / "k.toml"
    if case == "spec-zero":
        spec.symlink_to("/dev/zero")
    elif case == "spec-fifo":
        os.mkfifo(spec)
    elif case == "spec-deep":
        spec.write_text("x = " + "[" * 15_000 + "]" * 15_000)
    else:
        spec.write_text(SPEC)
        source = tmp_path / "mine.cu"
        if case == "source-zero":
            source.symlink_to("/dev/zero")
        elif case == "source-fifo":
            os.mkfifo(source)
        else:  # a file outside the folder, linked in
            (tmp_path.parent / "secret.cu").write_text("// not for the runner\n")
            source.symlink_to(tmp_path.parent / "secret.cu")
    return spec


@pytest.mark.parametrize("case", ["spec-zero", "spec-fifo", "spec-deep", "source-zero",
                                  "source-fifo", "source-outside"])
def test_a_hostile_kernel_spec_is_one_line_in_the_window(make_window, tmp_path, case):
    window = make_window()
    folder = tmp_path / "spec"
    folder.mkdir()
    assert window.open_kernel(_case(folder, case)) is False
    errors = [t for t in window.messages.texts() if "cannot open kernel" in t]
    assert len(errors) == 1 and "\n" not in errors[0] and len(errors[0]) < 600, errors
