"""The wire and the files: the wire's limits and writer (``events``), every event type as
one typed record (``records``) and the one decoder into them (``decoding``), the time
axis (``timeline``), the runner's commands, the run spec (``plan.RunRequest``), reading
recordings (``recording``, NVML samples in ``telemetry_columns``), writing them
(``session_file``, ``atomic_file``, ``output_file``), the throttle rule and the
source-counters event.

Above ``ladder`` only (a run's shape is ladder data); the runner needs ``events`` and
``commands``, which import no msgspec.
"""
