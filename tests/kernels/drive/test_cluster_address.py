"""Every cluster and remote address is parsed, and what cannot be used is refused in one
line (kernels/drive/cluster_address.py, kernels/drive/remote.py): property-based over any text, and
through ``record --cluster``, ``gemmscope worker`` and ``gemmscope scheduler`` for the
values that gave tracebacks or ran locally unasked."""

from __future__ import annotations

import io
import ipaddress
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.cli import options
from gemmscope.kernels.drive import cluster_serve, remote
from gemmscope.kernels.drive.cluster_address import (
    AddressRefused,
    SchedulerAddress,
    TlsFiles,
    parse_address,
    plain_allowed,
    security,
)

MAX_MESSAGE = 400


def one_line(message: str) -> bool:
    return (0 < len(message) <= MAX_MESSAGE and "\n" not in message
            and message.isprintable())


# ------------------------------------------------------------------ strategies
labels = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)
hostnames = st.lists(labels, min_size=1, max_size=4).map(".".join).filter(
    lambda h: not all(c.isdigit() or c == "." for c in h))
ipv4 = st.ip_addresses(v=4).map(str)
ipv6 = st.ip_addresses(v=6).map(lambda a: str(ipaddress.IPv6Address(a)))
ports = st.integers(1, 65535)
valid = st.builds(SchedulerAddress, st.sampled_from(["tcp", "tls"]),
                  st.one_of(hostnames, ipv4, ipv6), ports)
# text that looks like an address, with its parts broken in every way
pieces = st.sampled_from(["tcp://", "tls://", "ucx://", "inproc://", "ws://", "", "://",
                          "TCP://", "http://", "[", "]", "::1", "[::1]", "127.0.0.1",
                          ":", ":8786", ":0", ":99999", ":-5", ":+1", ":٣", ":²", "@", "/",
                          "host", "-host", "a..b", "é", "\x1b[2J", "\u202e", "\udcff",
                          " ", "\n", "a" * 70, "x" * 300])
address_like = st.lists(pieces, max_size=6).map("".join)


@given(st.one_of(st.text(), address_like))
def test_any_text_is_an_address_or_refused_in_one_line(text):
    try:
        address = parse_address(text)
    except AddressRefused as exc:
        assert one_line(str(exc)), repr(str(exc))
    else:
        assert address.scheme in ("tcp", "tls") and 0 < address.port < 65536
        assert parse_address(str(address)) == address


@given(valid)
def test_a_valid_address_round_trips(address):
    assert parse_address(str(address)) == address


@given(st.one_of(st.integers(max_value=0), st.integers(min_value=65536)), ipv4)
def test_a_port_out_of_range_is_refused(port, host):
    with pytest.raises(AddressRefused, match="port must be a number from 1 to 65535"):
        parse_address(f"tcp://{host}:{port}")


@given(valid.filter(lambda a: a.scheme == "tcp"))
def test_plain_tcp_beyond_loopback_needs_insecure(address):
    if address.loopback:
        plain_allowed(address, "127.0.0.1", False, TlsFiles())
        return
    with pytest.raises(AddressRefused, match="--insecure"):
        plain_allowed(address, None, False, TlsFiles())
    plain_allowed(address, None, True, TlsFiles())  # said on purpose: allowed


def test_a_loopback_scheduler_with_a_public_listener_needs_insecure():
    with pytest.raises(AddressRefused, match=r"0\.0\.0\.0"):
        plain_allowed(parse_address("tcp://127.0.0.1:8786"), "0.0.0.0", False, TlsFiles())


def test_tls_files_with_a_plain_address_are_refused():
    with pytest.raises(AddressRefused, match=r"give tls://127\.0\.0\.1:8786"):
        security(parse_address("127.0.0.1:8786"), TlsFiles(ca_file="ca.pem"), "client")


def test_tls_without_certificates_is_refused(monkeypatch):
    pytest.importorskip("distributed")
    for key in ("ca_file", "client__cert"):
        monkeypatch.delenv(f"DASK_DISTRIBUTED__COMM__TLS__{key.upper()}", raising=False)
    with pytest.raises(AddressRefused, match="needs certificates"):
        security(parse_address("tls://127.0.0.1:8786"), TlsFiles(), "client")


def test_tls_files_that_are_missing_not_regular_or_wrong_are_named(tmp_path):
    pytest.importorskip("distributed")
    tls_certs = pytest.importorskip("tls_certs")
    pem = tls_certs.make_ca_and_cert(tmp_path)
    address = parse_address("tls://127.0.0.1:8786")
    deep = tmp_path / ("d" * 90)  # (the file is named however deep its folder)
    cases = {TlsFiles(str(tmp_path / "none.pem"), str(pem.cert), str(pem.key)): "none.pem",
             TlsFiles(str(deep / "gone.pem"), str(pem.cert), str(pem.key)): "gone.pem",
             TlsFiles(str(pem.ca), "/dev/zero", str(pem.key)): "not a regular file",
             TlsFiles(str(pem.ca), str(pem.ca), str(pem.key)): "cannot be used"}
    for files, said in cases.items():
        with pytest.raises(AddressRefused, match=said) as caught:
            security(address, files, "client")
        assert one_line(str(caught.value))
    assert security(address, TlsFiles(str(pem.ca), str(pem.cert), str(pem.key)),
                    "client").require_encryption


# ------------------------------------------------------------------ through the CLI
BAD = ["", "tcp://", "garbage", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:-5",
       "tcp://[::1", "inproc://x", "ucx://10.0.0.1:13337", "tls://127.0.0.1:8786",
       "tcp://" + "h" * 3000 + ":8786", "tcp://10.0.0.1:8786", "tcp://[::1]:8786/x",
       "tcp://\x1b]0;owned\x07:1", "tcp://127.0.0.1:²"]


def run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    code = cli.main(argv, io.StringIO(), err)
    return code, err.getvalue()


@pytest.mark.parametrize("address", BAD)
def test_record_refuses_a_bad_cluster_address_before_anything(address, tmp_path):
    code, err = run_cli(["record", "-o", str(tmp_path / "r.jsonl"), f"--cluster={address}",
                         "-l", "naive", "-s", "16"])
    assert code == 2 and err.startswith("gemmscope record: --cluster: ")
    assert one_line(err.rstrip("\n")) and "\x1b" not in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("address", BAD)
def test_gemmscope_worker_refuses_a_bad_scheduler_address(address):
    code, err = run_cli(["worker", address])
    assert code == 2 and err.startswith("gemmscope worker: ") and one_line(err.rstrip("\n"))


@pytest.mark.parametrize("value", ["", " ", "-oProxyCommand=x", "user@", "h:99999",
                                   "h:٣", "[::1", "a" * 3000, "host\x1b[2J"])
def test_record_refuses_a_bad_remote_before_anything(value, tmp_path):
    code, err = run_cli(["record", "-o", str(tmp_path / "r.jsonl"), f"--remote={value}",
                         "-l", "naive", "-s", "16"])
    assert code == 2 and err.startswith("gemmscope record: --remote: ")
    assert one_line(err.rstrip("\n"))
    assert not list(tmp_path.iterdir())


@given(st.text(max_size=400))
def test_any_remote_text_is_a_target_or_refused_in_one_line(text):
    try:
        target = remote.parse_target(text)
    except ValueError as exc:
        assert one_line(str(exc)), repr(str(exc))
    else:
        assert target.host and not target.host.startswith("-")


def test_tls_options_without_cluster_are_refused(tmp_path):
    code, err = run_cli(["record", "-o", str(tmp_path / "r.jsonl"), "--insecure",
                         "-l", "naive"])
    assert code == 2 and "go with --cluster" in err


# ------------------------------------------------------------------ listening
def parsed(argv: list[str]) -> options.SchedulerOptions | options.WorkerOptions:
    """The typed options the command line hands the scheduler or the worker."""
    args = cli.build_parser().parse_args(argv)
    return (options.scheduler_options if argv[0] == "scheduler" else options.worker_options)(args)


def test_a_worker_of_a_loopback_scheduler_listens_on_loopback_without_dashboard():
    pytest.importorskip("distributed")
    argv, env = cluster_serve.worker_command(parsed(["worker", "tcp://127.0.0.1:8786",
                                                     "--device", "3"]))
    assert argv[:4] == [sys.executable, "-m", "distributed.cli.dask_worker",
                        "tcp://127.0.0.1:8786"]
    options = argv[4:]
    assert options[options.index("--host") + 1] == "127.0.0.1"
    assert "--no-dashboard" in options
    assert options[options.index("--dashboard-address") + 1] == "127.0.0.1:0"
    assert options[options.index("--nworkers") + 1] == "1"
    assert options[options.index("--nthreads") + 1] == "1"
    assert options[options.index("--resources") + 1] == "GPU=1"
    assert options[options.index("--name") + 1].startswith("gpu3@")
    assert env["CUDA_VISIBLE_DEVICES"] == "3" and env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


def test_a_worker_of_a_tls_scheduler_listens_where_it_reaches_it(tmp_path):
    pytest.importorskip("distributed")
    tls_certs = pytest.importorskip("tls_certs")
    pem = tls_certs.make_ca_and_cert(tmp_path)
    files = ["--tls-ca-file", str(pem.ca), "--tls-cert", str(pem.cert),
             "--tls-key", str(pem.key)]
    argv, _ = cluster_serve.worker_command(parsed(["worker", "tls://192.0.2.7:8786",
                                                   *files]))
    host = argv[argv.index("--host") + 1]
    assert not ipaddress.ip_address(host).is_unspecified  # one interface, not all
    assert argv[argv.index("--tls-cert") + 1] == str(pem.cert)
    assert "--no-dashboard" in argv


def test_the_scheduler_listens_on_loopback_unless_told_with_each_lost_run_said(monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.delenv(cluster_serve.ALLOWED_FAILURES_ENV, raising=False)
    argv, env = cluster_serve.scheduler_command(parsed(["scheduler"]))
    assert argv[argv.index("--host") + 1] == "127.0.0.1"
    assert argv[argv.index("--protocol") + 1] == "tcp"
    assert "--no-dashboard" in argv
    assert argv[argv.index("--dashboard-address") + 1] == "127.0.0.1:0"
    assert env[cluster_serve.ALLOWED_FAILURES_ENV] == "0"
    argv, _ = cluster_serve.scheduler_command(parsed(["scheduler", "--dashboard"]))
    assert argv[argv.index("--dashboard-address") + 1] == "127.0.0.1:8787"
    with pytest.raises(AddressRefused, match="--insecure"):
        cluster_serve.scheduler_command(parsed(["scheduler", "--host", "0.0.0.0"]))


@pytest.mark.parametrize("value", ["", "  ", "h:99999", "[::1"])
def test_the_app_refuses_a_bad_or_empty_remote_before_any_window(value, capsys):
    from gemmscope.app import gui_main

    assert gui_main.main([f"--remote={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemmscope: --remote: ") and one_line(err.rstrip("\n"))


@pytest.mark.parametrize("where", ["0.0.0.0:0", "0.0.0.0:8787", "[::]:8787", ":8787",
                                   "10.1.2.3:8787", "[2001:db8::1]:0", "example.org:80"])
def test_a_dashboard_beyond_loopback_takes_insecure(where):
    """Dask's dashboard has no login: served beyond loopback only when --insecure says
    so, and said in one line (issue 45)."""
    pytest.importorskip("distributed")
    for command in (["scheduler"], ["worker", "tcp://127.0.0.1:8786"]):
        with pytest.raises(AddressRefused, match="--insecure") as refused:
            (cluster_serve.scheduler_command if command[0] == "scheduler"
             else cluster_serve.worker_command)(parsed([*command, "--dashboard", where]))
        assert one_line(str(refused.value))
    argv, _ = cluster_serve.scheduler_command(parsed(["scheduler", "--dashboard", where,
                                                      "--insecure"]))
    assert argv[argv.index("--dashboard-address") + 1].endswith(where.rpartition(":")[2])


@pytest.mark.parametrize("where", ["127.0.0.1:0", "localhost:8787", "[::1]:8787",
                                   "127.0.0.2:9000"])
def test_a_dashboard_on_loopback_needs_nothing_more(where):
    pytest.importorskip("distributed")
    argv, _ = cluster_serve.scheduler_command(parsed(["scheduler", "--dashboard", where]))
    assert argv[argv.index("--dashboard-address") + 1] == where


@pytest.mark.parametrize("where", ["127.0.0.1", "127.0.0.1:99999", "a b:1", "[::1:80"])
def test_a_bad_dashboard_address_is_said(where):
    pytest.importorskip("distributed")
    with pytest.raises(AddressRefused, match=r"^--dashboard "):
        cluster_serve.scheduler_command(parsed(["scheduler", "--dashboard", where]))


def test_the_dashboard_refusal_is_one_line_on_the_command_line():
    pytest.importorskip("distributed")
    code, err = run_cli(["scheduler", "--dashboard", "0.0.0.0:0"])
    assert code == 2 and "--insecure" in err and one_line(err.rstrip("\n"))
