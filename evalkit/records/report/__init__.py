"""The report: rates, cells and factors from a folder, as text, markdown and JSON."""
