"""Animated views of the access models (tiling, banks, swizzle, coalescing)."""
