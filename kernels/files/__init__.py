"""Files a user hands the program (specs, sources, talks, recordings, preferences, the GPU
table), read as untrusted input: one reader, bounded in bytes and nesting, that refuses
what is not a regular file (``reading``). No Qt, nothing above it: every room may use it.
"""
