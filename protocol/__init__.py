"""The wire protocol: message classes, the msgpack codec and error codes. No I/O."""
