"""Every Redis key and channel name of the product, in one place.

All names start with one prefix (``pg:`` by default; give another to :class:`Keys`
to run several products or test suites in one Redis). Nothing else in the code base
builds a key name: Lua scripts receive every key they touch in ``KEYS``.

====================================  =========  ==============================================
Name                                  Type       Contents
====================================  =========  ==============================================
``pg:table:{t}``                      hash       ``v`` state version, ``seq`` last event
                                                 sequence number, ``tok`` fencing token of the
                                                 last writer, ``cid`` id of the last commit
                                                 (a retry's check), ``s.<name>`` each part of the
                                                 state (the store's format, see
                                                 :mod:`server.store.parts` and
                                                 :data:`TABLE_PART_PREFIX`); ``s`` the state
                                                 whole, in tables stored before parts, until
                                                 their first commit in parts deletes it
``pg:table:{t}:fence``                string     fencing counter: INCR gives each new owner a
                                                 larger token
``pg:table:{t}:lease``                string     ``<token>:<owner>``, SET NX PX; absent when no
                                                 process owns the table
``pg:table:{t}:events``               stream     replay buffer: entry id ``<seq>-0``, field
                                                 ``e`` the encoded event; the last N kept
``pg:table:{t}:applied:{b}``          hash       ledger keys applied by commits whose new
                                                 version is in window ``b`` -> ledger stream id;
                                                 expires (see :data:`APPLIED_WINDOW`)
``pg:table:{t}:events:chan``          pub/sub    live events, each ``seq`` (8 bytes, big
                                                 endian) followed by the encoded event
``pg:table:{t}:inbox``                stream     reserved: actions for the owner of ``t``
``pg:tables``                         set        ids of every table ever committed
``pg:account:{p}``                    hash       ``balance`` (chips, integer)
``pg:accounts``                       set        names of every player with an account
``pg:credits``                        hash       operator credit key -> ledger stream id
                                                 (idempotency of credits)
``pg:money``                          hash       ``in`` chips ever credited from outside,
                                                 ``out`` chips ever taken back out (a guest
                                                 account closed), ``entries`` ledger entries
                                                 ever appended
``pg:ledger``                         stream     every chip movement: ``key kind player amount
                                                 source dest table``; MAXLEN ~ a large bound;
                                                 entries older than the retention window move
                                                 to the archive (:func:`Keys.ledger_streams`)
``pg:request:{p}:{h}``                hash       a money request of player ``p`` already
                                                 applied, ``h`` = SHA-256 of its key
                                                 (``<session>:<rid>``, hex): ``f`` what
                                                 was asked, ``m`` what its reply needs,
                                                 ``a`` the account balance right after
                                                 it, ``t`` table, ``v`` version;
                                                 expires (see :data:`REQUEST_TTL_MS`)
``pg:log:{p}``                        list       game logs of player ``p``, newest first,
                                                 capped; each an 8-byte big-endian ordinal
                                                 followed by the record
``pg:session:{id}``                   hash       a resumable session: ``player``, ``name``,
                                                 ``guest``, ``exp`` when its credential expires
                                                 and ``at`` when it was opened (epoch ms); TTL
``pg:revoked:{p}``                    string     when an operator last ended ``p``'s sessions
                                                 (epoch ms): sessions opened before are refused
``pg:sessions:revoked``               pub/sub    a player whose sessions were ended: every node
                                                 closes their connections
``pg:guests``                         sorted set guest players, scored by their last activity
                                                 (epoch ms); idle ones are closed
``pg:guests:new:{m}``                 string     guests created in minute ``m`` (epoch minute);
                                                 expires after two minutes
``pg:guests:new:{m}:{a}``             string     the same, from client address ``a``
``pg:archiver``                       string     the archiver's lease: ``<owner>`` with a TTL
                                                 (one process archives at a time)
``pg:archive``                        string     the identity of the archive this Redis moves
                                                 its records to (another is refused)
``pg:names``                          hash       player -> the display name of their last hello
                                                 (a closed guest's goes too)
====================================  =========  ==============================================

``{t}`` is a table id, ``{p}`` a player name (validated by
:func:`server.auth.tokens.check_player`, so neither contains ``:`` or braces), ``{a}`` a
client address (hashed: see :meth:`Keys.guests_created`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_PREFIX = "pg:"

APPLIED_WINDOW = 4096
"""Versions per ``applied`` bucket. A commit checks the bucket of its new version and
the one before, so an entry key is refused a second time for at least this many
versions of its table (retries come within a few versions); older buckets are
deleted, which bounds the memory per table to two buckets."""

APPLIED_TTL_MS = 30 * 24 * 3600 * 1000
"""An ``applied`` bucket of a table that stops playing expires after this long."""

TABLE_PART_PREFIX = "s."
"""Prefix of the table hash's fields that hold the state's parts (``s.h``, ``s.c``,
``s.p0``...; the names after it are :mod:`server.store.parts`'): a part's field never
collides with ``v``, ``seq``, ``tok``, ``cid`` or ``s``. A commit writes only the parts that
changed, so the hash holds the state as the sum of every commit's parts."""

REQUEST_TTL_MS = 24 * 3600 * 1000
"""How long a player's money request stays recorded: within this time a request with the
same ``rid`` in the same session moves nothing and gets the first reply again
(protocol/PROTOCOL.md, section 3)."""


@dataclass(frozen=True, slots=True)
class Keys:
    """The key names under one ``prefix``."""

    prefix: str = DEFAULT_PREFIX

    # --- tables -----------------------------------------------------------------

    def table_state(self, table_id: str) -> str:
        """Hash: version, the state's parts, last event seq, last writer's token."""
        return f"{self.prefix}table:{table_id}"

    def table_fence(self, table_id: str) -> str:
        """String counter: the last fencing token handed out for the table."""
        return f"{self.prefix}table:{table_id}:fence"

    def table_lease(self, table_id: str) -> str:
        """String ``<token>:<owner>`` with a TTL: who owns the table now."""
        return f"{self.prefix}table:{table_id}:lease"

    def table_events(self, table_id: str) -> str:
        """Stream: the table's replay buffer, entry id ``<seq>-0``."""
        return f"{self.prefix}table:{table_id}:events"

    def table_channel(self, table_id: str) -> str:
        """Pub/sub channel of the table's live events."""
        return f"{self.prefix}table:{table_id}:events:chan"

    def table_inbox(self, table_id: str) -> str:
        """Stream (reserved): actions travelling to the table's owner."""
        return f"{self.prefix}table:{table_id}:inbox"

    def applied(self, table_id: str, bucket: int) -> str:
        """Hash: ledger keys applied by the table's commits in version window ``bucket``."""
        return f"{self.prefix}table:{table_id}:applied:{bucket}"

    def tables(self) -> str:
        """Set: every table id that has a stored state."""
        return f"{self.prefix}tables"

    # --- accounts and money -----------------------------------------------------

    def account(self, player: str) -> str:
        """Hash: the player's account (field ``balance``)."""
        return f"{self.prefix}account:{player}"

    def accounts(self) -> str:
        """Set: every player with an account."""
        return f"{self.prefix}accounts"

    def credits(self) -> str:
        """Hash: operator credit idempotency key -> ledger stream id."""
        return f"{self.prefix}credits"

    def money(self) -> str:
        """Hash: ``in`` (chips ever credited) and ``entries`` (ledger entries appended)."""
        return f"{self.prefix}money"

    def ledger_stream(self) -> str:
        """Stream: every chip movement of the product."""
        return f"{self.prefix}ledger"

    def ledger_streams(self, tables: Iterable[str] = (), players: Iterable[str] = ()) -> list[str]:
        """Every ledger stream to archive and audit, given the table ids and players
        that exist (today one stream for the whole product, whatever they are).

        The archiver and the audit find the ledger only through this function, and read
        each stream in its own id order: ledger streams per table or per account (with
        transfer records between them) change this function alone.
        """
        del tables, players  # one global stream today
        return [self.ledger_stream()]

    def request(self, player: str, rid: str) -> str:
        """Hash: ``player``'s money request ``rid``, once applied (with a TTL).

        ``rid`` holds the client's text (the server scopes it by session first): its
        digest keeps the name free of the separators and braces that key names avoid.
        """
        digest = hashlib.sha256(rid.encode()).hexdigest()
        return f"{self.prefix}request:{player}:{digest}"

    # --- players ----------------------------------------------------------------

    def game_log(self, player: str) -> str:
        """List: the player's game logs, newest first, capped."""
        return f"{self.prefix}log:{player}"

    def session(self, session_id: str) -> str:
        """Hash: a resumable session (player, name, guest, exp, at), with a TTL."""
        return f"{self.prefix}session:{session_id}"

    def names(self) -> str:
        """Hash: player -> the display name of their last hello (for the operator)."""
        return f"{self.prefix}names"

    def revoked(self, player: str) -> str:
        """String: when an operator last ended the player's sessions (epoch ms)."""
        return f"{self.prefix}revoked:{player}"

    def revocations(self) -> str:
        """Pub/sub channel: players whose sessions were ended (every node closes them)."""
        return f"{self.prefix}sessions:revoked"

    # --- guests -----------------------------------------------------------------

    def guests(self) -> str:
        """Sorted set: guest players by their last activity (epoch ms)."""
        return f"{self.prefix}guests"

    def guests_created(self, minute: int, address: str | None = None) -> str:
        """String counter: guests created in epoch minute ``minute`` (from ``address``).

        The address is hashed: IPv6 addresses hold ``:``, which key names avoid.
        """
        if address is None:
            return f"{self.prefix}guests:new:{minute}"
        digest = hashlib.sha256(address.encode()).hexdigest()[:16]
        return f"{self.prefix}guests:new:{minute}:{digest}"

    # --- the archive ------------------------------------------------------------

    def archiver_lease(self) -> str:
        """String ``<owner>`` with a TTL: the process archiving now."""
        return f"{self.prefix}archiver"

    def archive_identity(self) -> str:
        """String: the identity of the archive that holds this Redis's old records."""
        return f"{self.prefix}archive"


DEFAULT_KEYS = Keys()


def applied_bucket(version: int) -> int:
    """The ``applied`` bucket of the commit that writes ``version``."""
    return version // APPLIED_WINDOW
