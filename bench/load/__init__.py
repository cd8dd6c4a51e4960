"""Load generation: the driver's players (:class:`clients.core.Client` each), run as a
process of its own, and what it reads from the server under test."""
