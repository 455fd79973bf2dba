"""What NVIDIA GPUs offer, as data: datasheet peaks and memory bandwidth per GPU
(gpu_table.toml, read by gpu_table.py). No CUDA here; what a device says of itself is read
from the device (kernels/device)."""
