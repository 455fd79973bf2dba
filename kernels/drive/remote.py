"""A runner on another host, through the system's OpenSSH client. No Qt.

The runner already speaks JSON lines on stdin and stdout, so the transport is ``ssh``
with no TTY in batch mode: the user's keys, agent and ``~/.ssh/config`` apply, and a
password is never asked for (BatchMode refuses every prompt). :func:`ssh_command` builds
the argv; :class:`SshFailures` turns what ssh left behind (its exit code and the tail of
its stderr) into a sentence for each way it fails, and says which failures a retry cannot
cure, so a session gives up on them at once instead of retrying for a minute.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol.events import PROTOCOL_VERSION
from ..protocol.text_safety import shown
from .session_types import Failure

DEFAULT_REMOTE_COMMAND = "gemmscope runner"
MAX_TARGET_CHARS = 300  # user@ + a host name of at most 253 + :port
# a runner over ssh must say its header within this; then it has the usual start time
HEADER_TIMEOUT_S = 15.0
# ssh's own failures exit 255; a remote command's status is passed through otherwise
SSH_FAILED = 255
COMMAND_NOT_FOUND = 127
# the connection is given up when the host does not answer for ConnectTimeout, or stops
# answering keep-alives for ServerAliveInterval * ServerAliveCountMax: both within 15 s
SSH_OPTIONS = ("-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
               "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2")


@dataclass(frozen=True, slots=True)
class Target:
    """``[user@]host[:port]``."""

    host: str
    user: str | None = None
    port: int | None = None

    @property
    def destination(self) -> str:
        return f"{self.user}@{self.host}" if self.user else self.host

    def __str__(self) -> str:
        return self.destination + (f":{self.port}" if self.port is not None else "")


def parse_target(text: str) -> Target:
    """``[user@]host[:port]``; ``[v6addr]:port`` for an IPv6 address with a port.
    ValueError says what is wrong, in a line (the value quoted, escaped and cut)."""
    if len(text) > MAX_TARGET_CHARS or not text.isprintable():
        raise ValueError(f"{shown(text, 40)}: give [user@]host[:port] (at most "
                         f"{MAX_TARGET_CHARS} printable characters)")
    text = text.strip()
    user, at, rest = text.rpartition("@")
    if not at:
        user, rest = "", text
    port: int | None = None
    if rest.startswith("["):
        host, close, tail = rest[1:].partition("]")
        if not close:
            raise ValueError(f"{shown(text)}: an IPv6 address needs its closing ']'")
        if tail:
            if not tail.startswith(":"):
                raise ValueError(f"{shown(text)}: give [user@]host[:port]")
            port = _port(text, tail[1:])
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
        port = _port(text, port_text)
    else:
        host = rest  # a bare IPv6 address has several colons and no port
    if not host or host.startswith("-") or (at and not user) or any(c.isspace() for c in text):
        raise ValueError(f"{shown(text)}: give [user@]host[:port]")
    return Target(host, user or None, port)


def _port(text: str, port_text: str) -> int:
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise ValueError(f"{shown(text)}: the port must be a number from 1 to 65535")
    return int(port_text)


def ssh_command(target: str | Target, remote_command: str = DEFAULT_REMOTE_COMMAND,
                ssh: str = "ssh", extra: Sequence[str] = ()) -> list[str]:
    """The argv that starts ``remote_command`` on ``target`` with its pipes as ours.

    ``extra`` are ``-o`` options passed through (``["StrictHostKeyChecking=accept-new"]``)
    or whole ssh arguments (``["-F", "config"]``)."""
    tgt = target if isinstance(target, Target) else parse_target(target)
    argv = [ssh, *SSH_OPTIONS]
    for item in extra:
        argv += [item] if item.startswith("-") else ["-o", item]
    if tgt.port is not None:
        argv += ["-p", str(tgt.port)]
    # "--" ends ssh's options: a host can never be read as one
    return [*argv, "--", tgt.destination, remote_command]


_UNREACHABLE = re.compile(
    r"could not resolve hostname|name or service not known|no route to host|network is "
    r"unreachable|connection refused|connection timed out|operation timed out|"
    r"timed out during banner exchange|connection closed by remote host|"
    r"kex_exchange_identification", re.I)
_AUTH = re.compile(r"permission denied|too many authentication failures", re.I)
_HOST_KEY = re.compile(r"host key verification failed|remote host identification has "
                       r"changed|no .* host key is known", re.I)
_NOT_FOUND = re.compile(r"command not found|no such file or directory|not found", re.I)
_DROPPED = re.compile(r"broken pipe|connection reset|timeout, server .* not responding|"
                      r"connection to .* closed", re.I)


def explain(exit_code: int | None, stderr_tail: str, host: str = "the host",
            header_seen: bool = False) -> Failure:
    """What an ssh exit means, for each way it fails (see the module docstring).

    ``header_seen``: the runner had said its ``session`` header, so the connection had
    been up and a 255 now is the connection lost."""
    tail = stderr_tail.strip()
    last = "; ".join(tail.split("; ")[-2:])  # ssh's last words; the rest is advice
    said = f" (ssh: {last})" if last else ""
    if exit_code == SSH_FAILED:
        if header_seen:
            return Failure(f"connection to {host} lost{said}; Run again to reconnect", True)
        if _HOST_KEY.search(tail):
            return Failure(f"host key verification failed for {host}: its key is not in "
                           f"known_hosts or has changed; check it, then connect once with "
                           f"ssh{said}", True)
        if _AUTH.search(tail):
            return Failure(f"authentication refused by {host}: no key of yours is "
                           f"accepted there (gemmscope never asks for a password; add "
                           f"your key to its authorized_keys or ssh-agent){said}", True)
        if _UNREACHABLE.search(tail):
            if re.search(r"connection refused", tail, re.I):
                what = "connection refused (no ssh server on that port?)"
            elif re.search(r"timed out", tail, re.I):
                what = "connection timed out"
            else:
                what = "cannot connect"
            return Failure(f"host {host} unreachable: {what}{said}", True)
        return Failure(f"ssh to {host} failed{said}", True)
    if exit_code == COMMAND_NOT_FOUND or (not header_seen and _NOT_FOUND.search(tail)):
        return Failure(f"gemmscope is missing on {host}: the runner command was not found "
                       f"there (install gemmscope there, or pass --remote-command){said}",
                       True)
    if not header_seen:
        return Failure(f"the runner on {host} exited (code {exit_code}) before saying its "
                       f"session header: it does not speak gemmscope's protocol "
                       f"(version {PROTOCOL_VERSION}){said}", True)
    return Failure(f"the runner on {host} exited (code {exit_code}){said}", False)


def incompatible(host: str, reason: str) -> str:
    """The message for a runner whose header this reader cannot take."""
    return (f"the runner on {host} speaks an incompatible protocol: {reason}; install "
            f"the same gemmscope version on both machines")


class SshFailures:
    """A :class:`~gemmscope.kernels.drive.session.RunnerSession` failure explainer for a runner
    over ssh to ``host``."""

    def __init__(self, host: str) -> None:
        self.host = host

    def exited(self, exit_code: int | None, stderr_tail: str, header_seen: bool) -> Failure:
        return explain(exit_code, stderr_tail, self.host, header_seen)

    def incompatible(self, reason: str) -> str:
        return incompatible(self.host, reason)


def session_options(target: str | Target) -> dict[str, Any]:
    """RunnerSession keyword arguments for a runner over ssh to ``target``: its failures
    explained, its header bounded to ``HEADER_TIMEOUT_S`` and naming the host."""
    host = str(target if isinstance(target, Target) else parse_target(target))
    return {"explainer": SshFailures(host), "header_extra": {"remote": host},
            "header_timeout_s": HEADER_TIMEOUT_S}
