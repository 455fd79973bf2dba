"""Nsight Compute: profiling the levels (``ncu``) and reading its per-line source pages
into source-counters events.
"""
