"""The store's Lua scripts."""
