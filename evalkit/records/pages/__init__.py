"""The self-contained HTML page, its per-cell files and where a page may be written."""
