"""The app's preferences as plain data: an INI file (the path and format QSettings used,
so existing files keep working) read and written without Qt. No Qt.

QSettings unpickles a value written ``@Variant(...)``: a crafted preferences file ran code
at start-up, and a cut one stopped the app. Here a value is only ever a string, read by a
typed getter that checks it (a bool, an int or a number in its range, a choice, a line
of text of bounded length, base64 of bounded length); anything else (``@Variant``,
``@ByteArray`` where base64 is expected, a wrong type, an absurd number) falls back to
its default and leaves a note (``notes``) for the app to show. Nothing is unpickled,
evaluated or interpolated.

A store opened ``writable=False`` (a screenshot, an export, a talk) keeps its changes in
memory and never writes the file. Otherwise :meth:`sync` writes the file whole (a
temporary file beside it, checked, renamed; a symlink followed to its target), keeping
the keys it did not change as they were; a file it could not read is never overwritten.
"""

from __future__ import annotations

import base64
import binascii
import configparser
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from ...kernels.files import MAX_BYTES, Kind, NotRegularFile, open_regular
from ...kernels.protocol import shown, target_of, write_text

MAX_FILE_BYTES = MAX_BYTES[Kind.PREFERENCES]
MAX_TEXT_CHARS = 4096
MAX_BLOB_BYTES = 64 * 1024  # window geometry and dock state
GENERAL = "General"  # QSettings' section for keys without a group
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,4}|.)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
# a value written plain: anything else is quoted, as QSettings quotes it
_PLAIN = re.compile(r"[A-Za-z0-9._/:+-]*")
_INTEGER = re.compile(r"[+-]?[0-9]{1,19}")


def settings_file(env: Mapping[str, str] | None = None) -> Path:
    """Where QSettings("gemmscope", "gemmscope") keeps the preferences on Linux."""
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~"), ".config"))
    return Path(base).expanduser() / "gemmscope" / "gemmscope.conf"


def _unescape(match: re.Match[str]) -> str:
    code = match[1]
    if code[0] == "x" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _ESCAPES.get(code, code)


def decode_value(raw: str) -> tuple[str, bool]:
    """A value as QSettings wrote it (quotes around, backslash escapes, a leading ``@``
    doubled), and whether it is a typed one (``@Variant(...)``, ``@ByteArray(...)``),
    which every getter refuses."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    value = _ESCAPE.sub(_unescape, value)
    if value.startswith("@@"):
        return value[1:], False
    return value, value.startswith("@")


def encode_value(value: str) -> str:
    """A plain string as QSettings would write it (so an older gemmscope reads it too)."""
    if value.startswith("@"):
        value = "@" + value  # a leading @ marks a typed value: doubled, it is text
    if _PLAIN.fullmatch(value):
        return value
    escaped = "".join("\\\\" if c == "\\" else '\\"' if c == '"' else
                      f"\\x{ord(c):04x}" if not c.isprintable() else c for c in value)
    return f'"{escaped}"'


class PreferencesFile:
    """The preferences in ``path`` (None: the default file); see the module docstring."""

    def __init__(self, path: str | Path | None = None, writable: bool = True):
        self.path = Path(path) if path is not None else settings_file()
        self.writable = writable
        self.notes: list[str] = []
        self._noted: set[str] = set()
        self._changed: dict[str, str] = {}  # key -> value as written
        raw = self._read()
        if raw is None:  # could not be read: never overwritten
            self.writable = False
            raw = {}
        self._raw = raw

    # ------------------------------------------------------------------ reading
    def _note(self, key: str, text: str) -> None:
        if key not in self._noted:
            self._noted.add(key)
            self.notes.append(text)

    def _read(self) -> dict[str, str] | None:
        """key -> value as written in the file ({} for no file; None: unreadable)."""
        try:
            target = target_of(self.path)
        except NotRegularFile as exc:
            self._note("", f"preferences: {self.path}: {exc.strerror}; using the defaults, "
                           "and not saving them")
            return None
        try:
            with open_regular(target) as fh:  # a FIFO swapped in: refused, not waited on
                data = fh.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self._note("", f"preferences: cannot read {self.path} ({exc.strerror or exc}); "
                           "using the defaults, and not saving them")
            return None
        if len(data) > MAX_FILE_BYTES:
            self._note("", f"preferences: {self.path} is over {MAX_FILE_BYTES >> 20} MiB, "
                           "not a preferences file; using the defaults, and not saving them")
            return None
        return self._parse(data.decode("utf-8", errors="replace"))

    def _parse(self, text: str) -> dict[str, str] | None:
        parser = configparser.ConfigParser(interpolation=None, strict=False,
                                           delimiters=("=",), comment_prefixes=(";", "#"),
                                           empty_lines_in_values=False,
                                           default_section="\0none")
        parser.optionxform = str  # type: ignore[assignment, method-assign]  # keys keep case
        try:
            try:
                parser.read_string(text)
            except configparser.MissingSectionHeaderError:
                parser.read_string(f"[{GENERAL}]\n{text}")
        except (configparser.Error, RecursionError) as exc:
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self._note("", f"preferences: {self.path} is damaged ({shown(reason, 100)}); "
                           "using the defaults, and not saving them")
            return None
        out: dict[str, str] = {}
        for section in parser.sections():
            for name, value in parser.items(section, raw=True):
                out[name if section == GENERAL else f"{section}/{name}"] = value
        return out

    def raw(self, key: str) -> str | None:
        """The value of ``key`` as a string (QSettings' quoting undone), None if unset;
        a typed value is refused here, for every getter (said in a note)."""
        written = self._changed.get(key, self._raw.get(key))
        if written is None:
            return None
        value, typed = decode_value(written)
        if typed:
            self._note(key, f"preferences: {key} in {self.path} is a typed Qt value "
                            f"({shown(value, 40)}), not plain data; ignored, using the "
                            "default")
            return None
        return value

    def _refused(self, key: str, value: str, what: str, default: object) -> None:
        self._note(key, f"preferences: {key} in {self.path} is {shown(value, 60)}, not "
                        f"{what}; using {default!r}")

    def text(self, key: str, default: str, max_chars: int = MAX_TEXT_CHARS) -> str:
        value = self.raw(key)
        if value is None:
            return default
        if len(value) > max_chars or not value.isprintable():
            self._refused(key, value, f"a line of text of at most {max_chars} characters",
                          default)
            return default
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.raw(key)
        if value is None:
            return default
        found = {"true": True, "1": True, "false": False, "0": False}.get(value.lower())
        if found is None:
            self._refused(key, value, "true or false", default)
            return default
        return found

    def integer(self, key: str, default: int, lo: int, hi: int) -> int:
        value = self.raw(key)
        if value is None:
            return default
        text = value.strip()
        if not (_INTEGER.fullmatch(text) and lo <= int(text) <= hi):
            self._refused(key, value, f"a whole number from {lo} to {hi}", default)
            return default
        return int(text)

    def number(self, key: str, default: float, lo: float, hi: float) -> float:
        value = self.raw(key)
        if value is None:
            return default
        try:
            found = float(value) if len(value) <= 40 and value.isascii() else math.nan
        except ValueError:
            found = math.nan
        if not (math.isfinite(found) and lo <= found <= hi):
            self._refused(key, value, f"a number from {lo:g} to {hi:g}", default)
            return default
        return found

    def choice(self, key: str, default: str, choices: Iterable[str]) -> str:
        value = self.raw(key)
        allowed = list(choices)
        if value is None:
            return default
        if value not in allowed:
            self._refused(key, value, f"one of {', '.join(allowed)}", default)
            return default
        return value

    def blob(self, key: str, max_bytes: int = MAX_BLOB_BYTES) -> bytes | None:
        """Bytes kept as base64 (window geometry, dock state); None: unset or refused."""
        value = self.raw(key)
        if value is None:
            return None
        if len(value) <= (max_bytes * 4) // 3 + 4:
            try:
                return base64.b64decode(value.encode("ascii"), validate=True)
            except (binascii.Error, UnicodeEncodeError):
                pass
        self._refused(key, value, f"base64 of at most {max_bytes} bytes", None)
        return None

    # ------------------------------------------------------------------ writing
    def set(self, key: str, value: bool | int | float | str | bytes) -> None:
        """Keep ``value`` (plain data only) for :meth:`sync`."""
        if isinstance(value, bool):
            written = "true" if value else "false"
        elif isinstance(value, int):
            written = str(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{key}: {value} is not a finite number")
            written = repr(value)
        elif isinstance(value, bytes):
            if len(value) > MAX_BLOB_BYTES:
                raise ValueError(f"{key}: {len(value)} bytes, over {MAX_BLOB_BYTES}")
            written = base64.b64encode(value).decode("ascii")
        elif isinstance(value, str):
            written = encode_value(value)
        else:
            raise TypeError(f"{key}: a preference is plain data, not {type(value).__name__}")
        self._changed[key] = written

    def sync(self) -> bool:
        """Write the changes (if any, and if writable); False with a note if it failed."""
        if not self.writable or not self._changed:
            return False
        current = self._read()  # another window may have saved meanwhile: keep its keys
        if current is None:
            self.writable = False
            return False
        current.update(self._changed)
        try:
            target = target_of(self.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text(target, render(current))
        except OSError as exc:
            self._note("sync", f"preferences: cannot save {self.path} "
                               f"({exc.strerror or exc})")
            return False
        self._raw, self._changed = current, {}
        return True


def render(values: Mapping[str, str]) -> str:
    """key -> value as written, as INI text: [General] first, then each group."""
    groups: dict[str, list[str]] = {}
    for key, value in values.items():
        group, _, name = key.rpartition("/")
        # a value of several lines (a key the app does not know) keeps them as INI does:
        # each further line indented
        groups.setdefault(group or GENERAL, []).append(f"{name}={value}".replace("\n", "\n "))
    order = sorted(groups, key=lambda g: (g != GENERAL, g))
    return "".join(f"[{g}]\n" + "".join(f"{line}\n" for line in groups[g]) + "\n"
                   for g in order).rstrip("\n") + "\n"
