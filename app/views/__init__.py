"""The views: the main window's tabs (charts, telemetry, and the animations of how each
level maps tiles, warps, lanes, banks and swizzles). ``registry.VIEWS`` lists them."""
