"""What runs inside the runner process: the runner's loop, measuring, sustained runs,
energy, operands and their checks, quantizing, the cuBLASLt FP8 references, and the
one-launch process that Nsight Compute profiles (``launch``). The GUI never imports it.
"""
