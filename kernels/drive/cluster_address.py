"""Where a Dask cluster is, and who may talk to it: a scheduler address parsed and checked
once, and the TLS settings (Dask's ``distributed.security.Security``) of the client, the
scheduler and the workers gemmscope starts. No Qt; Dask only imported for TLS.

Dask runs pickled functions: whoever reaches a scheduler runs code on every worker, and a
worker's pickled answer runs code in the client. So a plain ``tcp://`` cluster is allowed
only where every end is on loopback (this machine's users); anything else takes ``tls://``
with a CA and certificates on every end (mutual authentication), or ``--insecure`` said
on purpose. docs/cluster.md says the same to users.
"""

from __future__ import annotations

import ipaddress
import os
import re
import stat
from dataclasses import dataclass
from typing import Any

from ..protocol.text_safety import shown, shown_path

SCHEMES = ("tcp", "tls")
# transports Dask knows that gemmscope does not take (said by name, not "unknown")
OTHER_TRANSPORTS = ("inproc", "ucx", "ws", "wss")
MAX_ADDRESS_CHARS = 300  # a host name has at most 253 characters
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
EXAMPLE = "tcp://127.0.0.1:8786 or tls://HOST:8786"


class AddressRefused(ValueError):
    """An address or a TLS setting that cannot be used; the message is one line."""


@dataclass(frozen=True, slots=True)
class SchedulerAddress:
    scheme: str  # "tcp" or "tls"
    host: str  # an IPv6 address without its brackets
    port: int

    @property
    def host_port(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host_port}"

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    """An address of this machine only: 127.0.0.0/8, ::1 or ``localhost``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: object) -> SchedulerAddress:
    """``tcp://HOST:PORT``, ``tls://HOST:PORT`` or ``HOST:PORT`` (tcp); ``[v6]:PORT``
    for IPv6. AddressRefused says what is wrong, in one line."""
    if not isinstance(text, str) or not text.strip():
        raise AddressRefused(f"an empty address: give {EXAMPLE}")
    if len(text) > MAX_ADDRESS_CHARS:
        raise AddressRefused(f"{shown(text, 40)} is too long for an address (a host name "
                             f"has at most 253 characters)")
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise AddressRefused(f"{shown(text)}: an address has no spaces or control "
                             "characters")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "tcp", text
    scheme = scheme.lower()
    if scheme in OTHER_TRANSPORTS:
        raise AddressRefused(f"{shown(text)}: the {scheme}:// transport is not supported; "
                             f"give {EXAMPLE}")
    if scheme not in SCHEMES:
        raise AddressRefused(f"{shown(text)}: unknown transport {shown(scheme, 20)}; give "
                             f"{EXAMPLE}")
    if any(c in rest for c in "/?#@"):
        raise AddressRefused(f"{shown(text)}: give only HOST:PORT after {scheme}://")
    host, port_text = _split_host_port(text, rest)
    return SchedulerAddress(scheme, _check_host(text, host), _check_port(text, port_text))


def _split_host_port(text: str, rest: str) -> tuple[str, str]:
    if rest.startswith("["):
        host, close, tail = rest[1:].partition("]")
        if not close:
            raise AddressRefused(f"{shown(text)}: an IPv6 address needs its closing ']'")
        if not tail.startswith(":"):
            raise AddressRefused(f"{shown(text)}: no port; give [{host}]:8786")
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise AddressRefused(f"{shown(text)}: {shown(host, 60)} is not an IPv6 "
                                 "address") from None
        return host, tail[1:]
    if not rest:
        raise AddressRefused(f"{shown(text)}: no host; give {EXAMPLE}")
    if rest.count(":") > 1:
        raise AddressRefused(f"{shown(text)}: an IPv6 address goes in brackets, as in "
                             "tcp://[::1]:8786")
    host, colon, port_text = rest.partition(":")
    if not colon:
        raise AddressRefused(f"{shown(text)}: no port; give {rest or 'HOST'}:8786")
    if not host:
        raise AddressRefused(f"{shown(text)}: no host; give {EXAMPLE}")
    return host, port_text


def _check_host(text: str, host: str) -> str:
    if ":" in host:
        return host  # an IPv6 address, checked with its brackets
    if re.fullmatch(r"[0-9.]+", host):
        try:
            return str(ipaddress.IPv4Address(host))
        except ValueError:
            raise AddressRefused(f"{shown(text)}: {shown(host, 40)} is not an IPv4 "
                                 "address") from None
    labels = host.rstrip(".").split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        raise AddressRefused(f"{shown(text)}: {shown(host, 60)} is not a host name "
                             "(letters, digits and '-', dot-separated labels of at most "
                             "63)")
    return host


def _check_port(text: str, port_text: str) -> int:
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise AddressRefused(f"{shown(text)}: the port must be a number from 1 to 65535")
    return int(port_text)


# ---------------------------------------------------------------------------- TLS
@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The PEM files of one end: the cluster's CA, this end's certificate and its key
    (None: the key is in the certificate's file, or Dask's configuration says)."""

    ca_file: str | None = None
    cert: str | None = None
    key: str | None = None

    def given(self) -> bool:
        return any(v is not None for v in (self.ca_file, self.cert, self.key))


def plain_allowed(address: SchedulerAddress, listen_host: str | None, insecure: bool,
                  tls: TlsFiles) -> None:
    """A tcp:// cluster: TLS files make no sense, and every end must be on loopback
    unless ``insecure`` (AddressRefused says why)."""
    if tls.given():
        raise AddressRefused(f"TLS files were given but {address} is plain tcp://; give "
                             f"tls://{address.host_port}")
    beyond = [h for h in (address.host, listen_host) if h is not None and not is_loopback(h)]
    if beyond and not insecure:
        raise AddressRefused(
            f"a plain tcp:// cluster on {beyond[0]} (not loopback) lets anyone who reaches "
            f"it run code on its workers and in its client: use tls:// with "
            f"certificates, or loopback through an ssh tunnel, or pass --insecure on a "
            f"network that is yours alone (docs/cluster.md)")


def _readable(option: str, path: str) -> str:
    try:
        info = os.stat(path)
    except OSError as exc:
        raise AddressRefused(f"{option} {shown_path(path)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise AddressRefused(f"{option} {shown_path(path)}: not a regular file")
    if not os.access(path, os.R_OK):
        raise AddressRefused(f"{option} {shown_path(path)}: not readable")
    return path


def security(address: SchedulerAddress, tls: TlsFiles, role: str, insecure: bool = False,
             listen_host: str | None = None) -> Any:
    """Dask's ``Security`` for ``role`` ("client", "scheduler" or "worker") at
    ``address``: None for a plain tcp:// cluster (allowed only as :func:`plain_allowed`
    says); for tls:// the CA and this end's certificate (the options, else Dask's
    configuration), loaded once here so that a bad file is said now, in a line."""
    if address.scheme == "tcp":
        plain_allowed(address, listen_host, insecure, tls)
        return None
    try:
        import dask
        from distributed.security import Security
    except ImportError as exc:
        raise AddressRefused(f"tls:// needs Dask distributed ({exc.name} is missing): "
                             "pip install 'gemmscope[cluster]'") from None
    ca = tls.ca_file or dask.config.get("distributed.comm.tls.ca-file", None)
    cert = tls.cert or dask.config.get(f"distributed.comm.tls.{role}.cert", None)
    key = tls.key or dask.config.get(f"distributed.comm.tls.{role}.key", None)
    if not ca or not cert:
        raise AddressRefused(f"{address} needs certificates: give --tls-ca-file (the "
                             f"cluster's CA) and --tls-cert (and --tls-key unless the key "
                             f"is in the certificate's file); docs/cluster.md")
    _readable("--tls-ca-file", ca)
    _readable("--tls-cert", cert)
    if key:
        _readable("--tls-key", key)
    sec = Security(require_encryption=True, tls_ca_file=ca,
                   **{f"tls_{role}_cert": cert, f"tls_{role}_key": key})
    try:  # load them now: a wrong file is said here, not as a traceback in Dask's loop
        (sec.get_listen_args if role != "client" else sec.get_connection_args)(role)
    except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or exc
        raise AddressRefused(f"the TLS files ({ca}, {cert}) cannot be used: "
                             f"{shown(reason, 120)}") from None
    return sec
