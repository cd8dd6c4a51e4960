"""Players' side of the store: accounts, resumable sessions, guests."""
