"""The statistics beside `evalkit.stats` that plan the next grid and guard against reading
too much into one: where the noise comes from (`variance`), an A/A run's re-splits (`aa`),
and a comparison that may stop early (`sequential`). Standard library only, below every
layer that reads rows, like `stats`."""
