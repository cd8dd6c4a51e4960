"""The machine's two tables: complete, and the module docstring's diagram is theirs.

That every step moves the phase only as the tables say is checked by the harness
(``helpers.check_phase_move``) on every event of every table test, the random
sequences of ``test_properties.py`` included.
"""

from __future__ import annotations

from server.table import machine
from server.table.events import Event
from server.table.machine import DEADLINES, ROWS, TRANSITIONS, diagram
from server.table.state import Phase


def test_the_docstring_diagram_is_the_tables() -> None:
    """Change a table and the diagram must follow (paste ``diagram()`` into it)."""
    assert machine.__doc__ is not None
    shown = "\n".join("    " + line for line in diagram())
    assert shown in machine.__doc__, "\n" + shown


def test_every_phase_but_idle_has_a_deadline() -> None:
    assert set(DEADLINES) == set(Phase) - {Phase.IDLE}
    for phase, deadline in DEADLINES.items():
        assert phase not in deadline.to  # a deadline always moves the table on


def test_each_event_has_one_row_per_phase_and_every_event_a_row() -> None:
    pairs = [(phase, event_type) for phases, event_type, _, _ in ROWS for phase in phases]
    assert len(pairs) == len(set(pairs)) == len(TRANSITIONS)
    assert {event_type for _, event_type, _, _ in ROWS} == set(Event.__args__)
