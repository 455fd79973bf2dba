"""The include rule read as the compiler reads it (issue 45): comments and line splices
cannot hide a directive, and what only looks like one is not refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.kernels.ladder.source_check import check_source

KERNEL = "__global__ void k() {}\n"


@pytest.mark.parametrize("text", [
    '/**/#include "/abs/outside.h"\n',
    '#/**/include "/abs/outside.h"\n',
    '# /* a */ include /* b */ "/abs/outside.h" /* c */\n',
    '/* a comment\n   of two lines */ #include "/abs/outside.h"\n',
    'int a; /* a comment\n*/ #include "/abs/outside.h"\n',
    '#include /*\n*/ "/abs/outside.h"\n',
    '#inc\\\nlude "/abs/outside.h"\n',
    '%:/**/include "../x.h"\n',
    '/**/ # include </etc/passwd>\n',
    '#if __has_include(<a/*>)\n#endif\n#include "/abs/outside.h"\n// */\n',
])
def test_a_comment_or_a_splice_hides_no_include(text):
    why = check_source("// a kernel\n" + text + KERNEL, "cuda")
    assert why is not None, text


@pytest.mark.parametrize("text", [
    '// #include "/abs/outside.h"\n',
    '/* #include "/abs/outside.h" */\n',
    '/*\n#include "/abs/outside.h"\n*/\n',
    'const char* s = "#include \\"/abs/outside.h\\"";\n',
    "const char c = '#'; // include\n",
    "int n = 1'000'000; /* '\n */\n",
    '#include <cuda_fp16.h> /* the half type */\n#include "common.cuh"\n',
    '// a comment that goes on \\\n#include "/abs/outside.h"\n',
])
def test_what_only_looks_like_an_include_is_allowed(text):
    assert check_source(text + KERNEL, "cuda") is None, text


@pytest.mark.parametrize(("text", "words"), [
    ('#define S R"(x)"\n', "raw string"),
    ("int a; \\  \n#include <cuda_fp16.h>\n", "backslash with blanks"),
    ("??=include <cuda_fp16.h>\n", "trigraph"),
    ("int a;\r#include <cuda_fp16.h>\n", "carriage return"),
    ("/* never closed\n", "never closed"),
    ("int a = 1;\x1b\n", "control character"),
])
def test_a_text_compilers_could_read_two_ways_is_refused(text, words):
    assert words in (check_source(text + KERNEL, "cuda") or "")


@pytest.mark.parametrize("text", [
    '#include "common.cuh" // the helpers\n',
    '/**/#include "common.cuh"\n',
    '#include \\\n"common.cuh"\n',
    '/*\n#include "common.cuh"\n*/\n',
])
def test_the_project_header_is_included_only_as_it_is_pasted(text):
    """nvrtc.assemble pastes common.cuh in where a line reads exactly so; any other
    include of it would send NVRTC looking for a file of that name on its own path."""
    assert "alone on its line" in (check_source(text + KERNEL, "cuda") or "")


def test_windows_line_ends_are_lines():
    assert check_source('#include <cuda_fp16.h>\r\n#include "common.cuh"\r\n' + KERNEL,
                        "cuda") is None


# --------------------------------------------------------------- every placement

_HIDERS = ("/**/", "/*\n*/", "/* x\n y */", "\\\n", " ", "\t")
_DIRECTIVE = ("#", "include", " ", '"/abs/outside.h"')


@st.composite
def placed(draw):
    """#include "/abs/outside.h" with comments, splices and blanks at random places
    (between the tokens and inside them); whether a compiler still sees the include."""
    text = "".join(_DIRECTIVE)
    bounds = {1, 8, 9}  # between the tokens: '#|include| |"..."'
    word = range(2, 8)  # inside 'include'
    name = range(10, len(text) - 1)  # inside the quoted name
    cuts = draw(st.lists(st.tuples(st.sampled_from([0, *bounds, *word, *name]),
                                   st.sampled_from(_HIDERS)), max_size=5))
    include = True
    for at, what in sorted(cuts, key=lambda c: c[0], reverse=True):
        text = text[:at] + what + text[at:]
        # a splice is seen by nothing; a comment or blank splits the word 'include'
        # (then no compiler reads an include); inside the quotes it is part of the name
        if at in word and what != "\\\n":
            include = False
    return text, include


@settings(max_examples=400, deadline=None)
@given(placed())
def test_every_placement_of_comments_and_splices(case):
    text, include = case
    why = check_source("// a kernel\n" + text + "\n" + KERNEL, "cuda")
    if include:
        assert why is not None, repr(text)


@settings(max_examples=200, deadline=None)
@given(placed(), st.sampled_from(["// ", 'const char* s = "', "int a; // ", "x = '#'; // "]))
def test_a_placement_inside_a_line_comment_or_a_string_is_harmless(case, before):
    text, _include = case
    if before.endswith('"'):  # a string literal of one line: no newline, quotes escaped
        text = text.replace("\n", " ").replace("\\ ", " ").replace('"', '\\"')
        text += '";'
    assert check_source(before + text + "\n" + KERNEL, "cuda") is None, repr(text)
