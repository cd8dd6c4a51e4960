"""End-to-end tests: whole servers (in this process or as paigow-server processes) on a
real Redis, played over real sockets."""
