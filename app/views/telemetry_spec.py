"""What the Telemetry tab plots: its strips and their titles, the NVML fields drawn on
each (legend, colour, dash), units, and how the view follows the newest samples and fits
a short tab."""

from __future__ import annotations

from ..core.store import Change
from ..theme import FAILED_COLOR

# plot name -> title (the left axis label; power's names the reading's kind; the
# reasons' rows are named by their ticks)
PLOTS = {"runs": "Runs", "clocks": "Clock (MHz)", "power": "Power (W)",
         "temperature": "Temp. (°C)", "gpm": "GPM (%)", "reasons": ""}
# field -> (plot, legend name, colour, dashed)
CURVES = {
    "sm_clock_mhz": ("clocks", "SM clock", "#1f77b4", False),
    "mem_clock_mhz": ("clocks", "memory clock", "#9467bd", False),
    "power_w": ("power", "power", FAILED_COLOR, False),
    "power_limit_w": ("power", "power limit", "#7f7f7f", True),
    "temp_c": ("temperature", "temperature", "#ff7f0e", False),
    "sm_occupancy_pct": ("gpm", "SM occupancy", "#1f77b4", False),
    "sm_util_pct": ("gpm", "SM active", "#2ca02c", False),
    "tensor_util_pct": ("gpm", "tensor pipe", "#ff7f0e", False),
    "dram_bw_util_pct": ("gpm", "DRAM bandwidth", "#9467bd", False),
    "fp32_util_pct": ("gpm", "FP32 pipe", "#8c564b", False),
}
TRIAL_PLOTS = ("clocks", "power", "temperature")  # shade sustained runs' trial windows
UNITS = {"clocks": "MHz", "power": "W", "temperature": "°C", "gpm": "%"}
LEGEND_PLOTS = ("clocks", "power", "temperature", "gpm")  # a legend row above the data
POWER_KIND_TEXT = {"instant": "instant", "average": "1 s average"}
WINDOW_S = 60.0  # seconds of history shown while following
STEP_S = 10.0  # the followed window moves in steps of this much
SAMPLES_END_NOTE_S = 2.0  # events this much past the last sample: the status says so
# what the view redraws for: samples and runs, the header; messages and counters move
# the session's end past the samples (the status says so)
SHOWN_CHANGES = frozenset({Change.TELEMETRY, Change.HEADER, Change.MESSAGES, Change.COUNTERS})
# the same left axis width on every plot, so the time axes line up; room for a reason's name
AXIS_WIDTH_PX = 112
# the plots kept first when the tab is short (the others hide till it is taller); each
# needs the room of its rotated axis title
FIT_ORDER = ("clocks", "power", "temperature", "gpm")
MIN_PLOT_PX = 90
