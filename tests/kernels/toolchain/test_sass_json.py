"""The SASS parser's two paths: nvdisasm's JSON (opcodes and operands as fields) and its
text (-c -gi), on the same cubins, give the same instructions; the JSON reader refuses
what is not nvdisasm JSON and reads a hand-made document field by field."""

from __future__ import annotations

import json
import re

import pytest

from gemmscope.kernels.ladder import registry
from gemmscope.kernels.toolchain import nvrtc, sass, sass_check, sass_json

pytest.importorskip("cuda.bindings.nvrtc", reason="the nvrtc extra is not installed")
needs_json = pytest.mark.skipif(
    sass_check.nvdisasm_path() is None
    or not sass_json.json_supported(str(sass_check.nvdisasm_path())),
    reason="no nvdisasm with -json here (nvidia-cuda-nvdisasm 12.8 or later)")


def _bare(text: str) -> str:
    """Without spaces, commas and the text's compiler annotations (``(*"SpillRefill"*)``),
    which the JSON keeps elsewhere."""
    return re.sub(r"\(\*.*?\*\)", "", text).replace(" ", "").replace(",", "")


@needs_json
@pytest.mark.parametrize(("level_id", "arch"), [("naive", "sm_80"), ("cp_async", "sm_89"),
                                                ("mma_sync", "sm_90"),
                                                ("wgmma_tma", "sm_90a")])
def test_json_and_text_give_the_same_instructions(level_id, arch):
    level = registry.get(level_id)
    out = nvrtc.compile_offline(level, arch=arch)
    files = list(nvrtc.source_files(level))
    tool = str(sass_check.nvdisasm_path())
    from_json = sass_json.from_json(sass_json.run_json(tool, out.cubin), files)
    from_text = {n: sass.parse(t) for n, t in sass.disassemble(out.cubin, files).items()}
    assert set(from_json) == set(from_text) == set(out.lowered.values())
    for name, lines in from_json.items():
        text_lines = from_text[name]
        assert len(lines) == len(text_lines) > 10
        for a, b in zip(lines, text_lines, strict=True):
            assert (a.offset, a.mnemonic, a.op_class, a.counted) == \
                (b.offset, b.mnemonic, b.op_class, b.counted)
            if "`(.L_x_" not in b.text:  # a jump target: an address in JSON, a label in text
                # (the JSON's operand text joins some memory operands without a comma)
                assert _bare(a.text) == _bare(b.text)
        assert sass.instruction_mix(lines) == sass.instruction_mix(text_lines)
        for ln in lines:
            for file, line in ln.where:  # a level's file, or a CUDA header by its name
                assert (file in files or "/" not in file) and line > 0


@needs_json
def test_instructions_take_the_json_path_where_nvdisasm_has_it():
    level = registry.get("naive")
    out = nvrtc.compile_offline(level, arch="sm_86")
    found, how = sass_json.instructions(out.cubin, list(nvrtc.source_files(level)))
    assert how == "json" and set(found) == set(out.lowered.values())


def test_a_hand_made_document_is_read_field_by_field():
    doc = [{"SchemaVersion": {"major": 13}},
           [{"function-name": "_Z1kv", "start": 0, "length": 48, "sass-instructions": [
               {"opcode": "LDS.U.128", "operands": "R4,[R2]", "source-file-id": 0,
                "source-line": 7},
               {"predicate": "@!PT", "opcode": "LDS", "operands": "RZ,[RZ]"},
               {"opcode": "HGMMA.64x256x16.F32.BF16", "operands": "R24,gdesc[UR4],R24"}]}],
           {"directories": ["/somewhere/kernels/cuda"], "files": [{"dir-idx": 0,
                                                                   "file": "k.cu"}]}]
    (lines,) = sass_json.from_json(json.dumps(doc), ["kernels/cuda/k.cu"]).values()
    assert [ln.offset for ln in lines] == [0, 16, 32]
    assert [ln.op_class for ln in lines] == ["LDS.128", "LDS", "HGMMA"]
    assert lines[0].where == (("kernels/cuda/k.cu", 7),)
    assert lines[0].text == "LDS.U.128 R4, [R2] ;"
    assert lines[1].counted is False and lines[2].where == ()


def test_the_predicate_file_nvdisasm_gives_as_a_predicate_is_an_operand_in_its_place():
    # nvdisasm's JSON has P2R R132, PR, RZ, 0x4 with "PR" in the predicate field
    doc = [{}, [{"function-name": "_Z1kv", "sass-instructions": [
        {"predicate": "PR", "opcode": "P2R", "operands": "R132,RZ,0x4"},
        {"predicate": "PR", "opcode": "R2P", "operands": "R8,0x7f"},
        {"predicate": "@P0", "opcode": "BRA", "operands": "0x80"}]}]]
    (lines,) = sass_json.from_json(json.dumps(doc)).values()
    assert [ln.text for ln in lines] == ["P2R R132, PR, RZ, 0x4 ;", "R2P PR, R8, 0x7f ;",
                                         "@P0 BRA 0x80 ;"]
    assert all(ln.counted for ln in lines)


@pytest.mark.parametrize("text", ["{}", "[1, 2]", "[]", '"x"'])
def test_what_is_not_nvdisasm_json_is_refused(text):
    with pytest.raises(ValueError):
        sass_json.from_json(text)
