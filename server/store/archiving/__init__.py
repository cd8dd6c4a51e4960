"""Redis's side of the archive: what is old enough to move, and its records."""
