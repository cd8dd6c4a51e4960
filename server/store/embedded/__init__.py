"""The embedded Redis: the child process, its data folder's lock, its supervisor."""
