"""What the Roofline tab draws, read from the session store (no Qt): a point per level
and reference with a result at the shape and mode shown, and the roofs of the GPU shown
per precision (the datasheet's from the header's device, else the GPU table; the
measured ones from the session's ``ceilings`` event). The numbers are
kernels/results/roofline.py's."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...kernels import protocol as rec
from ...kernels import results as rl
from ...kernels.hardware import lookup as gpu_spec
from ...kernels.hardware import problem as gpu_table_problem
from ...kernels.ladder import Shape
from ...kernels.protocol import Mode
from .baseline_run import baseline_device, baseline_warning
from .recording_contents import NOT_REPLAYED
from .store import SessionStore


@dataclass(frozen=True, slots=True)
class RooflineData:
    shape: Shape | None
    points: tuple[rl.Point, ...] = ()
    roofs: tuple[rl.Roof, ...] = ()  # datasheet
    measured: tuple[rl.Roof, ...] = ()  # the session's ceilings probes
    gpu: str = ""
    notes: tuple[str, ...] = field(default=())  # what is missing, said under the chart
    # the baseline recording's results at the same shape and mode (File ▸ Open baseline)
    baseline_points: tuple[rl.Point, ...] = ()
    baseline: str = ""  # its file name
    warning: str | None = None  # what differs between the two runs
    # how the session names each point's level (store.name_of), for the hover
    names: tuple[tuple[str, str], ...] = ()

    def name_of(self, level_id: str) -> str:
        return dict(self.names).get(level_id, level_id)


def _device(store: SessionStore) -> rec.DeviceInfo:
    entry = store.device_entry(store.device) if store.devices else None
    header = store.header.device if store.header is not None else None
    return entry or header or rec.DeviceInfo()


def _catalog(store: SessionStore) -> dict[str, rec.CatalogEntry]:
    entries = (store.header.catalog if store.header is not None else None) or []
    return {e.id: e for e in reversed(entries)}  # the first entry of an id


def _points(store: SessionStore, shape: Shape | None, mode: Mode,
            device: int | None = None) -> list[rl.Point]:
    """A point per level of the store with a result at ``shape`` in ``mode``."""
    catalog = _catalog(store)
    points: list[rl.Point] = []
    if shape is None:
        return points
    for level in store.levels:
        result = store.result_at(level.id, shape, mode, device)
        if result is None:
            continue
        counters = store.counters_for(level.id)
        dram = None
        # measured bytes of the level's code as it ran here: not of an earlier build's
        if counters is not None and counters.shape == shape and store.earlier_code(
                "counters", level.id, store.build_for(level.id)) is None:
            dram = rl.measured_dram_bytes(dict(counters.metrics), counters.launch)
        entry = catalog.get(level.id)
        p = rl.point(level.id, result.precision, result.dtype, shape.M, shape.N, shape.K,
                     result.tflops, entry.output_format if entry is not None else None,
                     level.is_reference, dram)
        if p is not None:
            points.append(p)
    return points


def _report_points(store: SessionStore) -> tuple[list[rl.Point], list[str]]:
    """A point per kernel of the opened Nsight Compute report with FLOPs, DRAM bytes and
    a time (its intensity is the measured one); a note for those without."""
    report = store.report
    if report is None:
        return [], []
    points, without = [], []
    for k in report.kernels:
        lk, tflops = k.kernel, report.tflops(k)
        ai = rl.intensity(lk.flops, lk.dram_bytes) if lk.flops else None
        if tflops is None or ai is None or tflops <= 0 or k.precision is None:
            without.append(k.key)
            continue
        points.append(rl.Point(k.key, k.precision, tflops, ai, ai))
    notes = []
    if without:
        shown = ", ".join(without[:3]) + (f" and {len(without) - 3} more"
                                          if len(without) > 3 else "")
        notes.append(f"no roofline point for {shown}: the report has no FLOP counts, DRAM "
                     "bytes or time of it (profile with --section SpeedOfLight_RooflineChart)")
    return points, notes


def _probe_of(ceilings: rec.Ceilings | None, roof: rl.Roof) -> str:
    """The instruction family of the probe that gave the roof's peak ("mma.sync"), or
    "probe" where the event does not say."""
    probes = [p for p in (ceilings.probes if ceilings is not None else ())
              if p.precision == roof.precision and p.tflops == roof.peak_tflops]
    return probes[0].instruction.split()[0] if probes and probes[0].instruction else "probe"


def roofline_data(store: SessionStore) -> RooflineData:
    shape = store.ladder_shape()
    device = _device(store)
    name = device.name or ""
    spec = gpu_spec(name) if name else None
    peaks = device.peak_tflops or (spec.peaks_tflops if spec else {})
    bandwidth = device.mem_bandwidth_gbs or (spec.memory_bandwidth_gbs if spec else None)
    points = _points(store, shape, store.mode)
    report_points, report_notes = _report_points(store)
    points += report_points
    base_points: list[rl.Point] = []
    base_name, warning = "", None
    if store.baseline is not None:
        base = store.baseline
        base_points = _points(base.store, shape, store.mode,
                              baseline_device(base.store, name, store.device))
        base_name = Path(base.path).name
        warning = baseline_warning(store, base)
    precisions = [p.precision for p in (*points, *base_points)]
    roofs = rl.roofs(peaks, bandwidth, precisions)
    ceilings = store.ceilings.get(store.device)
    measured = (rl.roofs({str(k): v for k, v in ceilings.peak_tflops.items()},
                         ceilings.bandwidth_gbs, precisions,
                         measured=True) if ceilings is not None else [])
    notes = []
    if gpu_table_problem() is not None:
        notes.append(str(gpu_table_problem()))
    if not roofs:
        notes.append(f"no datasheet roofs: {name or 'this GPU'} is not in the GPU table"
                     if spec is None and not device.mem_bandwidth_gbs
                     else "no datasheet roofs for these precisions")
    coming = store.coming()
    if not measured and coming is not None and store.device in coming.ceilings:
        notes.append(f"measured ceilings: {NOT_REPLAYED} (the recording has them)")
    elif not measured:
        notes.append("no measured ceilings in this session (gemmscope record --ceilings)")
    broken = rl.broken_roofs(measured, points)
    if broken:  # a probe that a kernel outran found no ceiling: not drawn as one
        measured = [r for r in measured if all(r is not b for b, _ in broken)]
        names = " and ".join(r.precision.upper() for r, _ in broken)
        faster = " and ".join(p.level for _, p in broken)
        probes = " and ".join(dict.fromkeys(_probe_of(ceilings, r) for r, _ in broken))
        notes.append(f"measured {names} roof{'s' if len(broken) > 1 else ''} left out: "
                     f"{faster} ran faster than the probe ({probes})")
    if points and not any(p.ai_measured for p in points):
        profiled = {level for level, _tool in coming.counters} if coming is not None else ()
        notes.append("intensity from M, N, K and the storage formats ("
                     + (f"the recording's ncu DRAM bytes: {NOT_REPLAYED})"
                        if any(p.level in profiled for p in points)
                        else "no ncu DRAM bytes of a whole launch recorded)"))
    notes += report_notes
    if store.baseline is not None and not base_points:
        notes.append(f"the baseline {base_name} has no result at this shape and mode")
    level_names = tuple((lid, store.name_of(lid))
                        for lid in dict.fromkeys(p.level for p in (*points, *base_points)))
    return RooflineData(shape, tuple(points), tuple(roofs), tuple(measured), name,
                        tuple(notes), tuple(base_points), base_name, warning, level_names)
