"""The runner's side of a user's kernel: a run command's ``kernel`` object checked
(``ladder/user_level.py``, no msgspec), its source written to a folder of its own
(``toolchain/user_sources.py``), and the Level the engine then runs like any other.

A source changed under the same id (the user edited the file and ran again in the same
session) must not reuse the compiled kernels of the old one: those are forgotten. The
first run of each source says what it is with a ``kernel`` event (docs/protocol.md), so a
recording names the user's kernel, its file and the hash of the source that ran.
"""

from __future__ import annotations

from typing import Any

from ..ladder import registry
from ..ladder.level import Level
from ..ladder.user_level import LaunchRefused, UserLaunch, from_wire
from ..toolchain import build_event, nvrtc
from ..toolchain.user_sources import folder_for

__all__ = ["LaunchRefused", "UserKernels"]


class UserKernels:
    """The user kernels one runner has been sent, by id, with their source hash."""

    def __init__(self) -> None:
        self.digests: dict[str, str] = {}

    def level(self, obj: Any) -> tuple[Level, UserLaunch, dict[str, Any] | None]:
        """The Level of a ``kernel`` object, the checked object, and the ``kernel``
        event to emit (None when this source was seen before). LaunchRefused says why
        the object is not one."""
        launch = from_wire(obj, frozenset(registry.BY_ID))
        level = launch.level(folder_for(launch))
        seen = self.digests.get(launch.id)
        if seen == launch.digest:
            return level, launch, None
        if seen is not None:  # an edited source under the same id: nothing of the old
            nvrtc.forget(launch.id)
            build_event.forget(launch.id)
        self.digests[launch.id] = launch.digest
        event = {"type": "kernel", "level": launch.id, "file": launch.file,
                 "language": launch.language, "name": launch.name,
                 "sha256": launch.digest, "catalog": level.catalog_entry(-1)}
        return level, launch, event
