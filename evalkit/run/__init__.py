"""Running reps: sandboxes, the agent process, one rep, plans and grids."""
