"""The table state machine: pure, no I/O, no clock."""
