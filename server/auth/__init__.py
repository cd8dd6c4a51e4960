"""Players and authentication: signed, expiring player tokens."""
