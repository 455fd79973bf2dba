"""The checkout is the ``gemmscope`` package, read by file position.

Installed, pyproject.toml maps ``app/``, ``kernels/`` and ``resources/`` into the
``gemmscope`` namespace (this file is not installed). In the checkout, this file makes
the repository root that package, so the explicit relative imports between the folders
(``from ...kernels.protocol import ...`` in ``app/core/``) resolve by file position for
static tools: type checkers, IDEs and structure maps.
"""
