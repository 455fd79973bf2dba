"""What runs inside the runner process: the runner's loop, measuring, sustained runs,
energy, operands and their checks, quantizing, the cuBLASLt FP8 references, and the
one-launch process that Nsight Compute profiles (``launch``). The GUI never imports it.
"""

# the face hands nothing on: the runner is entered through the command line (cli), and
# the app never imports the engine (an import contract)
__all__: list[str] = []
