"""The GPU-side command line (``cli.main``): runner, scheduler, worker, bench, record,
report, levels, diff, sass. ``cli.subcommands`` names them without importing the rest, for
the app's entry point. This face imports nothing (the app imports ``cli.subcommands`` at start).
"""
