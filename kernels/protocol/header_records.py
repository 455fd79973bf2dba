"""The records of a session's header and its parts (``records`` lists every event
type): the session line itself, the GPUs it names, the level catalog and sources, and a
GPU that joins later."""

from __future__ import annotations

import msgspec

from ..ladder.level import current_params
from .record_base import Event, Index, Number, Placed, Record


# ------------------------------------------------------------------ the header's parts
class SourceRef(Record, kw_only=True):
    source: str
    sha256: str


class Version(Record, kw_only=True):
    version: str | None = None
    commit: str | None = None


class TelemetryInfo(Record, kw_only=True):
    available: bool = False
    reason: str | None = None
    hz: Number | None = None


class DeviceInfo(Record, kw_only=True):
    """A GPU as its runner describes it; every field may be unknown."""

    name: str | None = None
    sm_count: int | None = None
    cc: str | None = None
    arch: str | None = None
    sm_clock_max_mhz: Number | None = None
    mem_clock_max_mhz: Number | None = None
    memory_gib: Number | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    cuda_runtime: str | None = None
    cupy: str | None = None
    peak_tflops: dict[str, Number | None] | None = None
    limits: dict[str, int] | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    # the GPU table's row (kernels/hardware/gpu_table.toml): bandwidth, the clocks the
    # peaks assume, where they come from; absent in older recordings
    mem_bandwidth_gbs: Number | None = None
    peak_clock_mhz: Number | None = None
    peak_tensor_clock_mhz: Number | None = None
    peak_source: str | None = None
    gpu_table_key: str | None = None


class DeviceEntry(DeviceInfo, kw_only=True):
    """One GPU of a session (the header's ``devices``, or a ``device`` event)."""

    id: Index
    gpu: str | None = None
    host: str | None = None
    worker: str | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None


class CatalogEntry(Record, kw_only=True):
    """A level as the runner's registry described it (the header's ``catalog``)."""

    id: str
    title: str | None = None
    adds: str | None = None
    precision: str | None = None
    params: dict[str, int] | None = None
    block: list[int] | None = None
    tile: list[int] | None = None
    follows: str | None = None
    notes: str | None = None
    kind: str | None = None
    order: int | None = None
    source: str | None = None
    arch: str | None = None
    b_layout: str | None = None
    persistent: bool | None = None
    k_multiple: int | None = None
    archs: list[str] | None = None  # the architectures it claims (kernels/ladder/arch.py)
    arch_need: str | None = None  # the same in words: "sm_80+", "sm_90a only (Hopper)"
    output_format: str | None = None  # how it stores C
    user: str | None = None  # a user's kernel: its file (docs/user-kernels.md)
    toolchain: str | None = None  # a user's kernel: "nvrtc" or "triton"

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = current_params(self.params)


# ------------------------------------------------------------------ events
class Session(Event, tag="session", kw_only=True):
    """The first line of a session: the protocol, the device(s) and the levels."""

    protocol: int
    created: str
    levels: dict[str, SourceRef]  # level id -> its .cu and hash (entries of another shape dropped)
    device: DeviceInfo | None = None
    catalog: list[CatalogEntry] | None = None
    gemmscope: Version | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None
    synthetic: bool = False
    remote: str | None = None
    devices: list[DeviceEntry] | None = None
    gpu: str | None = None

    def gpus(self) -> list[DeviceEntry]:
        """The GPUs of the session: ``devices`` (version 4), else one entry, id 0, made of
        ``device`` (older files; none without a GPU)."""
        if self.devices:
            return list(self.devices)
        if self.device is None:
            return []
        return [DeviceEntry(id=0, **msgspec.structs.asdict(self.device), host=self.remote,
                            telemetry=self.telemetry)]


class Joined(Placed, tag="device", kw_only=True):
    """A GPU that joined the session after its header (a cluster worker): ``device`` is
    its index; the rest is a ``devices`` entry's (:class:`DeviceEntry`: an event and a
    part of one cannot share a base, a test holds these to its names and types)."""

    device: Index
    name: str | None = None
    sm_count: int | None = None
    cc: str | None = None
    arch: str | None = None
    sm_clock_max_mhz: Number | None = None
    mem_clock_max_mhz: Number | None = None
    memory_gib: Number | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    cuda_runtime: str | None = None
    cupy: str | None = None
    peak_tflops: dict[str, Number | None] | None = None
    limits: dict[str, int] | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    mem_bandwidth_gbs: Number | None = None
    peak_clock_mhz: Number | None = None
    peak_tensor_clock_mhz: Number | None = None
    peak_source: str | None = None
    gpu_table_key: str | None = None
    gpu: str | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None

    def entry(self) -> DeviceEntry:
        fields = msgspec.structs.asdict(self)
        for name in ("t", "device", "id"):
            fields.pop(name)
        return DeviceEntry(id=self.device, **fields)
