"""Loops that drive runs and comparisons on their own schedule: `watch` runs the gate's grid
on each new release of an agent's CLI against the pinned one. They sit above `compare` and
below `cli`, so a loop can run reps (`run/`) and hand them to the statistics (`compare/`)."""
