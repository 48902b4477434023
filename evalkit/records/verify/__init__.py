"""Re-deriving every row of a folder, and the record of what verify found."""
