"""The GPU-side command line (``cli.main``): runner, scheduler, worker, bench, record,
report, levels, diff, sass. ``cli.subcommands`` names them without importing the rest, for
the app's entry point; this face loads nothing until a name of it is asked for.
"""

# the face: the options the app's own command line shares with the CLI (``--remote``,
# ``--device``...). The app's entry points enter the command line by its modules,
# ``cli.main``, ``cli.quick`` and ``cli.subcommands`` (the import contract on the app's
# faces names those imports)
from typing import TYPE_CHECKING

from ..faces import lazy

__all__ = ["add_gpu_options", "add_remote_options"]

if TYPE_CHECKING:  # the same names, for the type checker and the import contracts
    from .options import add_gpu_options, add_remote_options
else:
    __getattr__, __dir__ = lazy(__name__, {"options": ("add_gpu_options", "add_remote_options")})
