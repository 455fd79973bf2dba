"""The wire and the files: events and their checks (``events``), the runner's commands,
the run spec (``plan.RunRequest``), reading recordings, writing them (``session_file``,
``atomic_file``, ``output_file``), the throttle rule and the source-counters event.

The bottom layer beside ``ladder``: it imports nothing else of gemmscope.
"""
