# Sourced by the GPU scripts that import gemmscope from this checkout without installing
# it (benchmarks/tf32_h200.sh, benchmarks/attempts/round3.sh), from the checkout's root:
# msgspec from the checkout's .whl/ where the machine lacks it (the lent GPU machine has
# no package index: docs/gpu-run-plan.md), and gemmscope as a folder of links put first
# on PYTHONPATH.
python3 -c "import msgspec" 2>/dev/null ||
  python3 -m pip install -q --no-deps --no-index .whl/msgspec-*.whl
gemmscope_links=$(mktemp -d)
mkdir -p "$gemmscope_links/gemmscope"
for x in app kernels resources __init__.py; do
  ln -s "$PWD/$x" "$gemmscope_links/gemmscope/$x"
done
export PYTHONPATH="$gemmscope_links${PYTHONPATH:+:$PYTHONPATH}"
