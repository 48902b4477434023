"""Everything that can change a verdict. The lock hashes this whole package."""
