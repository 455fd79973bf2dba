"""Recordings compressed with gzip (``.jsonl.gz``, as the bundled ones are shipped) read as
the plain file reads, bounded as untrusted input: a file cut short keeps what came before
the cut and says so, a corrupt stream is a named error, a stream that inflates far past
its size (a "zip bomb") is refused before it is inflated, and progress goes by the bytes of
the file. A recording is only written plain: a .gz output name is refused with what to do."""

from __future__ import annotations

import gzip
import io

import places
import pytest

from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.output_file import OutputRefused, output_file

PLAIN = places.FIXTURES / "h200-ceilings.jsonl"


def gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


def summary(session: recording.Session) -> tuple:
    return (session.header, [type(e).__name__ for e in session.events],
            [getattr(e, "tflops", None) for e in session.results], session.samples,
            session.skipped_count)


def test_a_gzipped_recording_reads_as_the_plain_file(tmp_path):
    packed = tmp_path / "r.jsonl.gz"
    packed.write_bytes(gz(PLAIN.read_bytes()))
    assert summary(recording.read_session(packed)) == summary(recording.read_session(PLAIN))


def test_the_gzip_magic_decides_not_the_name(tmp_path):
    odd = tmp_path / "named-plain.jsonl"
    odd.write_bytes(gz(PLAIN.read_bytes()))
    assert summary(recording.read_session(odd)) == summary(recording.read_session(PLAIN))


def test_a_compressed_file_cut_short_keeps_the_events_before_the_cut(tmp_path):
    whole = gz(PLAIN.read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    got = recording.read_session(cut)
    full = recording.read_session(PLAIN)
    assert got.header == full.header
    assert 0 < len(got.events) < len(full.events)
    assert got.skipped_count >= 1
    assert any("ends early" in str(e) for e in got.skipped)


def test_a_corrupt_stream_is_a_named_error_not_a_crash(tmp_path):
    whole = bytearray(gz(PLAIN.read_bytes()))
    whole[40:60] = b"\xff" * 20  # inside the deflate data
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(bytes(whole))
    with pytest.raises(ProtocolError, match="not a readable gzip file"):
        recording.read_session(bad)


@pytest.mark.parametrize(("at", "said"), [(-6, "incorrect data check"),
                                         (-2, "incorrect length check")])
def test_a_stream_whose_check_does_not_match_is_a_named_error(tmp_path, at, said):
    whole = bytearray(gz(PLAIN.read_bytes()))
    whole[at] ^= 1  # the CRC or the length gzip ends a member with
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(bytes(whole))
    with pytest.raises(ProtocolError, match=f"not a readable gzip file.*{said}"):
        recording.read_session(bad)


def test_members_one_after_another_read_as_one_file_zeros_between_passed_over(tmp_path):
    data = PLAIN.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    joined = tmp_path / "joined.jsonl.gz"
    joined.write_bytes(gz(data[:half]) + b"\0" * 512 + gz(data[half:]) + b"\0" * 3)
    assert summary(recording.read_session(joined)) == summary(recording.read_session(PLAIN))


def test_a_stream_that_inflates_far_past_its_size_is_refused(tmp_path):
    buf = io.BytesIO()
    header = PLAIN.read_bytes().split(b"\n", 1)[0] + b"\n"
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9, mtime=0) as out:
        out.write(header)
        block = b" " * (1 << 20)
        for _ in range(80):  # 80 MiB of blanks: about 80 KB compressed
            out.write(block)
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(buf.getvalue())
    assert bomb.stat().st_size < 1 << 20
    with pytest.raises(ProtocolError, match="inflates past"):
        recording.read_session(bomb)


def test_progress_goes_by_the_files_bytes_up_to_one(tmp_path):
    big = PLAIN.read_bytes() * 12  # several chunks once inflated
    packed = tmp_path / "p.jsonl.gz"
    packed.write_bytes(gz(big))
    seen: list[float] = []
    recording.read_session(packed, progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen)


def test_a_recording_is_not_written_compressed(tmp_path):
    with pytest.raises(OutputRefused, match=r"plain JSON lines.*gzip"):
        output_file(str(tmp_path / "new.jsonl.gz"))


# what ``cat new >> old.jsonl.gz`` and other copies leave after the last whole member
GARBAGE = [b"{\"type\":\"info\",\"t\":1}\n" * 3, b"\x1f", b"\x1f\x8b", b"\x1f\x8b\x07rest",
           b"\xff" * 10_000, bytes(range(1, 256)) * 40, b"\x1f\x8b\x08" + b"\xff" * 64,
           b"PK\x03\x04 a zip"]


@pytest.mark.parametrize("garbage", GARBAGE, ids=range(len(GARBAGE)))
@pytest.mark.parametrize("members", [1, 2])
def test_garbage_after_the_last_whole_member_is_a_cut_said_not_a_refusal(tmp_path, garbage,
                                                                         members):
    data = PLAIN.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    packed = gz(data) if members == 1 else gz(data[:half]) + gz(data[half:])
    path = tmp_path / "appended.jsonl.gz"
    path.write_bytes(packed + garbage)
    got = recording.read_session(path)
    full = recording.read_session(PLAIN)
    assert got.header == full.header
    assert len(got.events) == len(full.events)  # every event of the whole members
    said = [str(e) for e in got.skipped if "gzip" in str(e) or "damaged" in str(e)]
    assert len(said) == 1 and "\n" not in said[0], got.skipped
    if not garbage.startswith(b"\x1f\x8b\x08"):
        assert f"at byte {len(packed):,}" in said[0] and f"{len(garbage):,} bytes" in said[0]


def test_a_damaged_later_member_keeps_the_members_before_it(tmp_path):
    data = PLAIN.read_bytes()
    half = data.index(b"\n", len(data) // 2) + 1
    second = bytearray(gz(data[half:]))
    second[40:60] = b"\xff" * 20  # inside its deflate data
    path = tmp_path / "damaged.jsonl.gz"
    first = gz(data[:half])
    path.write_bytes(first + bytes(second))
    got = recording.read_session(path)
    assert got.events[0] == recording.read_session(PLAIN).events[0]
    assert any(f"damaged gzip member after byte {len(first):,}" in str(e)
               for e in got.skipped)


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # the GPU machine has no hypothesis
    pass
else:
    @settings(max_examples=40)
    @given(st.binary(min_size=1, max_size=4096).filter(lambda b: b.strip(b"\0")))
    def test_any_junk_after_a_whole_member_keeps_every_event(tmp_path_factory, junk):
        path = tmp_path_factory.mktemp("junk") / "r.jsonl.gz"
        packed = gz(PLAIN.read_bytes())
        path.write_bytes(packed + junk)
        got = recording.read_session(path)
        assert len(got.events) == len(recording.read_session(PLAIN).events)
        said = [str(e) for e in got.skipped if "gzip" in str(e)]
        assert len(said) == 1 and "\n" not in said[0]
