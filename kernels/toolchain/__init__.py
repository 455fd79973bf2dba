"""The toolchain: NVRTC builds of the levels (``nvrtc``), cubin reading, occupancy, SASS and
its check against the access models, build events and build reports.
"""
