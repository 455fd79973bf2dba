"""Which GPU a runner uses: one runner per GPU, chosen by its parent. No CuPy, no Qt.

The parent starts each runner with ``CUDA_VISIBLE_DEVICES=N`` and
``CUDA_DEVICE_ORDER=PCI_BUS_ID``: the runner then sees one device, CUDA's 0, and N means
the same GPU as ``nvidia-smi`` and NVML's index N (CUDA's own default order, fastest
first, may differ from it). NVML ignores ``CUDA_VISIBLE_DEVICES``, so the runner's NVML
sampler finds its GPU by the PCI bus id CUDA reports (:func:`same_bus_id`), and the
index only where CUDA cannot say.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..protocol.option_bounds import MAX_GPU_INDEX, whole_number
from ..protocol.text_safety import shown

VISIBLE = "CUDA_VISIBLE_DEVICES"
ORDER = "CUDA_DEVICE_ORDER"


def gpu_env(gpu: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a runner on GPU ``gpu`` (an nvidia-smi index)."""
    env = dict(os.environ if base is None else base)
    env[VISIBLE] = str(gpu)
    env[ORDER] = "PCI_BUS_ID"
    return env


def gpu_shell_prefix(gpu: int) -> str:
    """The same, for a command a shell runs on another host (over ssh)."""
    return f"env {VISIBLE}={gpu} {ORDER}=PCI_BUS_ID "


def parse_devices(text: str, count: int | None) -> list[int]:
    """``--devices``: ``0,1``, ``0-3`` or ``all`` (``count``: the GPUs NVML sees here,
    None where it cannot tell). ValueError says what is wrong."""
    text = text.strip().lower()
    if text == "all":
        if not count:
            raise ValueError("'all' needs NVML to count this machine's GPUs, and it sees "
                             "none; give the indices (0,1)")
        return list(range(count))
    out: list[int] = []
    said = shown(text, 40)
    for part in (p.strip() for p in text.split(",")):
        lo_text, dash, hi_text = part.partition("-")
        lo, hi = whole_number(lo_text), whole_number(hi_text) if dash else None
        if lo is None or lo_text.strip()[:1] in "+-" or (dash and (
                hi is None or hi_text.strip()[:1] in "+-")):
            raise ValueError(f"{said}: give GPU indices (0,1 or 0-3) or all")
        if max(lo, hi or 0) > MAX_GPU_INDEX:  # before a range is made of it
            raise ValueError(f"{said}: a GPU index is from 0 to {MAX_GPU_INDEX}")
        for gpu in range(lo, (hi if hi is not None else lo) + 1):
            if gpu in out:
                raise ValueError(f"{said}: GPU {gpu} is given twice")
            out.append(gpu)
    if not out:
        raise ValueError(f"{said}: no GPU index")
    if count is not None and count > 0 and max(out) >= count:
        raise ValueError(f"{said}: this machine has {count} GPU(s), 0 to {count - 1}")
    return out


def visible_index(env: Mapping[str, str] | None = None) -> int:
    """The NVML index of the one GPU this process was given (``CUDA_VISIBLE_DEVICES=N``
    in PCI bus order), else 0."""
    env = os.environ if env is None else env
    visible = env.get(VISIBLE, "").strip()
    if visible.isdigit() and env.get(ORDER) == "PCI_BUS_ID":
        return int(visible)
    return 0


def normal_bus_id(text: str) -> str:
    """A PCI bus id as NVML (``00000000:19:00.0``) and CUDA (``0000:19:00.0``) write it,
    made comparable: domain without leading zeros, lower case."""
    domain, _, rest = text.strip().lower().partition(":")
    try:
        return f"{int(domain, 16):x}:{rest}"
    except ValueError:
        return text.strip().lower()


def same_bus_id(a: str | bytes, b: str | bytes) -> bool:
    a = a.decode() if isinstance(a, bytes) else a
    b = b.decode() if isinstance(b, bytes) else b
    return normal_bus_id(a) == normal_bus_id(b)
