"""The reference client."""
