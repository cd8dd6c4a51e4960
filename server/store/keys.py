"""Every Redis key and channel name of the product, in one place.

All names start with one prefix (``pg:`` by default; give another to :class:`Keys`
to run several products or test suites in one Redis). Nothing else in the code base
builds a key name: Lua scripts receive every key they touch in ``KEYS``.

The braces are part of the names: a Redis Cluster *hash tag*, so that every key of one
table falls in the table's slot and every key of one player in the player's, and a
script that touches one table's keys (or one player's) runs on one node
(docs/DESIGN.md, "Keys ready for Redis Cluster"). No script touches two owners' keys:
chips between an account and a table move in two steps joined by a transfer id
(:mod:`server.store.chips.transfers`). The few keys of no owner (``pg:tables``,
``pg:accounts``) are only ever touched by single-key commands.

Of a table ``t`` (slot of ``{t}``):

====================================  =========  ==============================================
Name                                  Type       Contents
====================================  =========  ==============================================
``pg:table:{t}``                      hash       ``v`` state version, ``seq`` last event
                                                 sequence number, ``tok`` fencing token of the
                                                 last writer, ``cid`` id of the last commit
                                                 (a retry's check), ``n`` ledger entries ever
                                                 appended to the table's ledger, ``xn``
                                                 transfers its commits ever started or took
                                                 (the audit's sign of a chip crossing),
                                                 ``s.<name>`` each part of the state (the
                                                 store's format, see
                                                 :mod:`server.store.tables.parts` and
                                                 :data:`TABLE_PART_PREFIX`); ``s`` the state
                                                 whole, in tables stored before parts, until
                                                 their first commit in parts deletes it;
                                                 ``f`` the fence, the token of the table's last
                                                 taking (deleted by its release): a commit with
                                                 it reads no lease; ``ab`` ``<bucket>:<ms>``,
                                                 the ``applied`` bucket whose time to live was
                                                 last set, and when
``pg:table:{t}:fence``                string     fencing counter: INCR gives each new owner a
                                                 larger token
``pg:table:{t}:lease``                string     ``<token>:<owner>``, SET NX PX; absent when no
                                                 process owns the table
``pg:table:{t}:events``               stream     replay buffer, an entry a commit: id
                                                 ``<seq>-0`` of its first event, field ``e``
                                                 that encoded event, ``e1``, ``e2``... the
                                                 next ones; the last N entries kept
``pg:table:{t}:applied:<b>``          hash       ledger keys applied by commits whose new
                                                 version is in window ``b`` -> ledger stream id;
                                                 expires (see :data:`APPLIED_WINDOW`)
``pg:table:{t}:ledger``               stream     the table's chip movements, in order: ``key
                                                 kind player amount source dest table`` and
                                                 ``xfer`` (the transfer id, for a movement to
                                                 or from an account), each a field, or (the
                                                 commits' since issue 16) as one msgpack array
                                                 in field ``m`` (:class:`~server.store.
                                                 archiving.records.LedgerRow` reads both);
                                                 MAXLEN ~ a large bound
``pg:table:{t}:in``                   hash       transfer id -> ``<state>:<player>:<amount>:
                                                 <ms>:<kind>``: chips coming from an account
                                                 (``open``: expected, ``received``: on the
                                                 table, ``void``: refused, to be refunded)
``pg:table:{t}:out``                  hash       transfer id -> the transfer (msgpack): chips
                                                 the table sent to an account, until the
                                                 account has them
``pg:table:{t}:logs``                 hash       the game logs of a commit on their way to
                                                 their players' lists, one entry (its first
                                                 log's transfer id -> the logs, compressed:
                                                 :func:`~server.store.chips.records.pack_logs`)
``pg:table:{t}:request:<p>:<h>``      hash       player ``p``'s money request applied at this
                                                 table, ``h`` = SHA-256 of ``<session>:<rid>``:
                                                 ``f`` what was asked, ``m`` what its
                                                 reply needs, ``a`` the account balance right
                                                 after it (when known then), ``x`` the transfer
                                                 that paid it out, ``v`` version; expires (see
                                                 :data:`REQUEST_TTL_MS`)
``pg:table:{t}:events:chan``          pub/sub    a table's live events for the other nodes: the
                                                 public frames, and which players have a
                                                 private frame (``server/cluster/wire.py``)
``pg:table:{t}:requests``             pub/sub    requests travelling to the node that holds
                                                 ``t``
``pg:table:{t}:summary``              string     what the lobby shows of ``t`` and its seats'
                                                 table balances, written by its holder after
                                                 each change
``pg:table:{t}:watchers``             hash       node instance -> connections watching ``t``
                                                 there
====================================  =========  ==============================================

Of a player ``p`` (slot of ``{p}``):

====================================  =========  ==============================================
``pg:account:{p}``                    hash       ``balance`` (chips), ``in`` chips ever
                                                 credited from outside, ``out`` chips ever
                                                 taken back out (a guest closed), ``n`` ledger
                                                 entries ever appended to the account's
                                                 ledger; a guest's: ``guest`` 1, ``seen`` its
                                                 last activity (ms), ``closed`` when it was
                                                 closed (then only ``in``, ``out``, ``n``
                                                 remain beside it, for the audit)
``pg:account:{p}:ledger``             stream     the account's chip movements, in order (the
                                                 fields of a table's ledger)
``pg:account:{p}:credits``            hash       operator credit key -> ledger stream id
                                                 (idempotency of credits); an operator's
                                                 credit, debit or reversal
                                                 (:meth:`~server.store.players.accounts.
                                                 AccountStore.operate`) keeps
                                                 ``<id>|<fingerprint>|<balance>|<amount>``
``pg:account:{p}:reversed``           hash       credit's ledger id -> the ledger id of its
                                                 reversal (a credit is reversed once)
``pg:account:{p}:transfer:<h>``       string     what the account did with the chips of
                                                 transfer ``h`` (SHA-256 of its id):
                                                 ``reserved:<balance>``, ``settled``,
                                                 ``refunded``, ``void``, ``applied:<balance>``;
                                                 expires once final (:data:`TRANSFER_TTL_MS`)
``pg:account:{p}:request:<h>``        hash       the claim of a money request, ``h`` = SHA-256
                                                 of ``<session>:<rid>``: ``f`` what was asked,
                                                 ``t`` at which table (so that a rid is one
                                                 request across tables); expires
``pg:log:{p}``                        list       game logs of player ``p``, newest first,
                                                 capped; each an 8-byte big-endian ordinal
                                                 followed by the record
``pg:player:{p}:chan``                pub/sub    player ``p``'s private frames (their cards),
                                                 for the nodes where ``p`` is connected
``pg:player:{p}:seats``               set        tables where ``p`` sits (kept by the tables'
                                                 holders; a hint, checked against the table)
``pg:player:{p}:nodes``               hash       node instance -> ``p``'s connections there
``pg:player:{p}:revoked``             string     when an operator last ended ``p``'s sessions
                                                 (epoch ms): sessions opened before are refused
====================================  =========  ==============================================

Of a jackpot ``j`` (slot of ``{j}``; :mod:`server.store.jackpot`, shared by every table
that names it, on any node):

====================================  =========  ==============================================
``pg:jackpot:{j}``                    hash       ``meter`` chips on the meter, ``seed`` the
                                                 seed last used, ``frac`` contributions below
                                                 one chip (in chip-basis-points), ``seeded``
                                                 chips the house ever put on the meter,
                                                 ``contributed`` chips the wagers ever put on
                                                 it, ``paid`` chips its hits ever paid,
                                                 ``hits``, ``n`` ledger entries ever appended
``pg:jackpot:{j}:ledger``             stream     the meter's chip movements (the fields of a
                                                 table's ledger; pots ``house``, ``meter``,
                                                 ``account``); MAXLEN ~ a large bound
``pg:jackpot:{j}:done:<h>``           string     what the contribution or hit with ledger key
                                                 ``h`` (SHA-256) did, so that a retry does it
                                                 again for nothing; expires
                                                 (:data:`JACKPOT_CONTRIBUTION_TTL_MS`,
                                                 :data:`JACKPOT_HIT_TTL_MS`)
``pg:jackpot:{j}:out``                hash       transfer id -> ``<player>|<amount>|<key>``: a
                                                 hit paid, until the player's account has it
``pg:jackpot:{j}:chan``               pub/sub    ``<meter>``, after each change of the meter
====================================  =========  ==============================================

Of no owner (single-key commands only):

====================================  =========  ==============================================
``pg:tables``                         set        ids of every table that ever took a lease
``pg:accounts``                       set        names of every player with an account
``pg:jackpots``                       set        names of every jackpot that was ever started
``pg:admin:tokens``                   hash       operator API token id -> ``<name>|<expires
                                                 s>|<minted s>``: the admin tokens that
                                                 stand (a token whose id is gone is revoked)
``pg:catalog``                        hash       the tables catalog, the truth of which tables
                                                 exist (:mod:`server.store.catalog`): ``rev``
                                                 a number grown by every change, ``c.<t>``
                                                 table ``t``'s settings (msgpack map),
                                                 ``s.<t>`` its status (``open``, ``closing``,
                                                 ``closed``); one key, changed by its scripts
``pg:catalog:chan``                   pub/sub    the catalog changed (the table's id): every
                                                 node reads it again
``pg:session:<id>``                   hash       a resumable session: ``player``, ``name``,
                                                 ``guest``, ``exp`` when its credential expires
                                                 and ``at`` when it was opened (epoch ms); TTL
``pg:sessions:revoked``               pub/sub    a player whose sessions were ended: every node
                                                 closes their connections
``pg:guests``                         sorted set guest players by their last activity (ms): the
                                                 archiver's list of guests to close when idle
                                                 (the account's ``seen`` decides)
``pg:guests:new:<m>``                 hash       guests created in epoch minute ``m``: ``*`` in
                                                 total, and per client address (hashed);
                                                 expires after two minutes
``pg:archiver``                       string     the archiver's lease: ``<owner>`` with a TTL
                                                 (one process archives at a time)
``pg:archive``                        string     the identity of the archive this Redis moves
                                                 its records to (another is refused)
``pg:names``                          hash       player -> the display name of their last hello
``pg:nodes``                          sorted set the live nodes: member the node's instance,
                                                 score the time its registration expires (ms)
``pg:node:<n>``                       hash       node instance ``n``: ``name``, ``url``, ``started``
                                                 (expires with the registration)
``pg:node-name:<name>``               string     the instance that holds node name ``name`` (the
                                                 last process started under it; expires with
                                                 its registration)
``pg:node:<n>:chan``                  pub/sub    messages to node instance ``n``: replies to
                                                 the requests it forwarded, hand-over hints
``pg:nodes:chan``                     pub/sub    messages to every node: a session resumed
                                                 (its connections elsewhere close)
``pg:layout``                         string     the key layout of this Redis (:data:`LAYOUT`)
``pg:layout:lock``                    string     the process migrating the layout (TTL)
``pg:money``                          hash       left by the migration from the first layout:
                                                 ``in`` chips credited that no account's
                                                 ``in`` counts (its ledger was trimmed)
``pg:credits``                        hash       left by the migration: credit keys of the
                                                 first layout whose player is unknown
====================================  =========  ==============================================

``{t}`` is a table id (letters, digits, ``-`` and ``_``), ``{p}`` a player name
(validated by :func:`server.auth.tokens.check_player`), so neither contains ``:`` or
braces; ``<n>`` a node instance (``<node name>#<pid>-<random hex>``). The channels of
several nodes (``server/cluster``) are named under their table's or player's hash tag
too, so that sharded pub/sub can publish each on its own shard.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

DEFAULT_PREFIX = "pg:"

LAYOUT = "2"
"""The key layout written here: ``1`` (no value) was the first, with no hash tags and one
ledger for the whole product; :mod:`server.store.migrate` moves a Redis from it."""

APPLIED_WINDOW = 4096
"""Versions per ``applied`` bucket. A commit checks the bucket of its new version, and
in the first half of a window the one before too, so an entry key is refused a second
time for at least half this many versions of its table (2,048 versions, over a hundred
rounds; retries come within a few versions); older buckets are deleted, which bounds
the memory per table to two buckets."""

APPLIED_TTL_MS = 30 * 24 * 3600 * 1000
"""An ``applied`` bucket of a table that stops playing expires after this long (at
most: its time to live is set by its first entry and again once half of it is gone)."""

TABLE_PART_PREFIX = "s."
"""Prefix of the table hash's fields that hold the state's parts (``s.h``, ``s.c``,
``s.p0``...; the names after it are :mod:`server.store.tables.parts`'): a part's field never
collides with ``v``, ``seq``, ``tok``, ``cid``, ``n``, ``xn``, ``f``, ``ab`` or ``s``. A
commit writes only the parts that changed, so the hash holds the state as the sum of every commit's
parts."""

REQUEST_TTL_MS = 24 * 3600 * 1000
"""How long a player's money request stays recorded: within this time a request with the
same ``rid`` in the same session moves nothing and gets the first reply again
(protocol/PROTOCOL.md, section 3)."""

TRANSFER_TTL_MS = 24 * 3600 * 1000
"""How long an account remembers a finished transfer (applied, settled, refunded,
refused): a late call about it in that time changes nothing. A transfer still reserved
is remembered until it is settled or refunded."""


JACKPOT_CONTRIBUTION_TTL_MS = 24 * 3600 * 1000
"""How long a jackpot remembers a contribution: a retry within it adds nothing. A day,
as a transfer's (a retry comes from the table's holder or the next one, within
seconds): a key each seat's wager, so a week would hold millions of them."""

JACKPOT_HIT_TTL_MS = 90 * 24 * 3600 * 1000
"""How long a jackpot remembers a hit: a retry within it gets the same payment again."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Keys:
    """The key names under one ``prefix``."""

    prefix: str = DEFAULT_PREFIX

    # --- tables -----------------------------------------------------------------

    def table_state(self, table_id: str) -> str:
        """Hash: version, the state's parts, last event seq, last writer's token."""
        return f"{self.prefix}table:{{{table_id}}}"

    def table_fence(self, table_id: str) -> str:
        """String counter: the last fencing token handed out for the table."""
        return f"{self.prefix}table:{{{table_id}}}:fence"

    def table_lease(self, table_id: str) -> str:
        """String ``<token>:<owner>`` with a TTL: who owns the table now."""
        return f"{self.prefix}table:{{{table_id}}}:lease"

    def table_events(self, table_id: str) -> str:
        """Stream: the table's replay buffer, an entry a commit, id ``<seq>-0`` of its first."""
        return f"{self.prefix}table:{{{table_id}}}:events"

    def table_channel(self, table_id: str) -> str:
        """Pub/sub channel of the table's live events, for the nodes that relay them."""
        return f"{self.prefix}table:{{{table_id}}}:events:chan"

    def table_requests(self, table_id: str) -> str:
        """Pub/sub channel of the requests for the table, heard by the node holding it."""
        return f"{self.prefix}table:{{{table_id}}}:requests"

    def table_summary(self, table_id: str) -> str:
        """String: the table as the lobby shows it, from its holder (``server/cluster``)."""
        return f"{self.prefix}table:{{{table_id}}}:summary"

    def table_watchers(self, table_id: str) -> str:
        """Hash: node instance -> connections watching the table there."""
        return f"{self.prefix}table:{{{table_id}}}:watchers"

    def applied(self, table_id: str, bucket: int) -> str:
        """Hash: ledger keys applied by the table's commits in version window ``bucket``."""
        return f"{self.prefix}table:{{{table_id}}}:applied:{bucket}"

    def table_ledger(self, table_id: str) -> str:
        """Stream: the table's chip movements, in order."""
        return f"{self.prefix}table:{{{table_id}}}:ledger"

    def transfers_in(self, table_id: str) -> str:
        """Hash: transfers of chips from accounts to the table, until finished."""
        return f"{self.prefix}table:{{{table_id}}}:in"

    def transfers_out(self, table_id: str) -> str:
        """Hash: transfers of chips from the table to accounts, until delivered."""
        return f"{self.prefix}table:{{{table_id}}}:out"

    def logs_out(self, table_id: str) -> str:
        """Hash: game logs of the table's rounds on their way to their players."""
        return f"{self.prefix}table:{{{table_id}}}:logs"

    def table_request(self, table_id: str, player: str, rid: str) -> str:
        """Hash: ``player``'s money request ``rid`` applied at the table (with a TTL).

        ``rid`` holds the client's text (the server scopes it by session first): its
        digest keeps the name free of the separators and braces that key names avoid.
        """
        return self.table_request_by_digest(table_id, player, _digest(rid))

    def table_request_by_digest(self, table_id: str, player: str, digest: str) -> str:
        """:meth:`table_request` by the digest of the rid (as the first layout kept it)."""
        return f"{self.prefix}table:{{{table_id}}}:request:{player}:{digest}"

    def tables(self) -> str:
        """Set: every table id that took a lease (single-key commands only)."""
        return f"{self.prefix}tables"

    # --- the tables catalog -----------------------------------------------------

    def catalog(self) -> str:
        """Hash: every table created, its settings and its status (see the module
        docstring); one key, so its scripts run in one slot."""
        return f"{self.prefix}catalog"

    def catalog_channel(self) -> str:
        """Pub/sub channel: the catalog changed (the table's id), for every node."""
        return f"{self.prefix}catalog:chan"

    # --- accounts and money -----------------------------------------------------

    def account(self, player: str) -> str:
        """Hash: the player's account (``balance``, ``in``, ``n``)."""
        return f"{self.prefix}account:{{{player}}}"

    def account_ledger(self, player: str) -> str:
        """Stream: the account's chip movements, in order."""
        return f"{self.prefix}account:{{{player}}}:ledger"

    def credits(self, player: str) -> str:
        """Hash: the account's operator credit keys -> ledger stream id."""
        return f"{self.prefix}account:{{{player}}}:credits"

    def account_reversals(self, player: str) -> str:
        """Hash: credit ledger id -> the ledger id of its reversal."""
        return f"{self.prefix}account:{{{player}}}:reversed"

    def account_transfer(self, player: str, transfer_id: str) -> str:
        """String: what ``player``'s account did with a transfer (see the table above)."""
        return f"{self.prefix}account:{{{player}}}:transfer:{_digest(transfer_id)}"

    def claim(self, player: str, rid: str) -> str:
        """Hash: the claim of ``player``'s money request ``rid`` (``<session>:<rid>``)."""
        return self.claim_by_digest(player, _digest(rid))

    def claim_by_digest(self, player: str, digest: str) -> str:
        """:meth:`claim` by the digest of the rid (as the first layout kept it)."""
        return f"{self.prefix}account:{{{player}}}:request:{digest}"

    def accounts(self) -> str:
        """Set: every player with an account (single-key commands only)."""
        return f"{self.prefix}accounts"

    # --- the operator's wallet (wallet mode, :mod:`server.store.chips.wallet`) -----

    def wallet_intents(self, player: str) -> str:
        """Hash: ``player``'s debits of the operator's wallet, by request (the digest of
        ``<session>:<rid>``) -> ``<state>|<attempt>|<amount>|<ms>`` (``open``: asked, the
        answer unknown; ``applied``: in the account, held for the request; ``done``,
        ``returned``, ``released``, ``void``: finished)."""
        return f"{self.prefix}account:{{{player}}}:wallet:intents"

    def wallet_txns(self, player: str) -> str:
        """Hash: every wallet transaction of ``player`` this server made -> ``<kind>|
        <amount>|<state>|<ms>`` (a debit ``open``, ``applied`` or ``void``; a credit
        ``pending`` in the outbox or ``acked``): this server's side of the
        reconciliation."""
        return f"{self.prefix}account:{{{player}}}:wallet:txns"

    def wallet_outbox(self, player: str) -> str:
        """List: ``player``'s credits not yet acknowledged by the wallet, oldest first
        (transaction ids; their amounts in :meth:`wallet_txns`)."""
        return f"{self.prefix}account:{{{player}}}:wallet:outbox"

    def wallet_players(self) -> str:
        """Set: every player with a wallet transaction (single-key commands only)."""
        return f"{self.prefix}wallet:players"

    def wallet_work(self) -> str:
        """Set: players with an open debit or a credit waiting, for the wallet's
        workers (single-key commands only; a member with nothing left is removed)."""
        return f"{self.prefix}wallet:work"

    # --- progressive jackpots (:mod:`server.store.jackpot`) ---------------------------

    def jackpot(self, name: str) -> str:
        """Hash: jackpot ``name``'s meter and its totals (see the module docstring)."""
        return f"{self.prefix}jackpot:{{{name}}}"

    def jackpot_ledger(self, name: str) -> str:
        """Stream: the jackpot's chip movements, in order."""
        return f"{self.prefix}jackpot:{{{name}}}:ledger"

    def jackpot_done(self, name: str, key: str) -> str:
        """String: what the jackpot's contribution or hit of ledger key ``key`` did."""
        return f"{self.prefix}jackpot:{{{name}}}:done:{_digest(key)}"

    def jackpot_out(self, name: str) -> str:
        """Hash: the jackpot's hits on their way to their players' accounts."""
        return f"{self.prefix}jackpot:{{{name}}}:out"

    def jackpot_channel(self, name: str) -> str:
        """Pub/sub channel: the jackpot's meter after each change."""
        return f"{self.prefix}jackpot:{{{name}}}:chan"

    def jackpots(self) -> str:
        """Set: every jackpot ever started (single-key commands only)."""
        return f"{self.prefix}jackpots"

    # --- ledgers ----------------------------------------------------------------

    def ledger_streams(self, table_ids: Iterable[str], players: Iterable[str]) -> list[str]:
        """Every ledger stream of these tables and players: the tables' first, then the
        accounts', each in the order given. Each stream is one source's movements in
        the order they happened (entry ids grow), and can be trimmed from its start once
        archived; :func:`server.store.chips.ledgers.ledger_streams` lists them all from Redis.
        """
        return [self.table_ledger(t) for t in table_ids] + [self.account_ledger(p) for p in players]

    # --- nodes ------------------------------------------------------------------

    def nodes(self) -> str:
        """Sorted set: live node instances, scored by when their registration expires."""
        return f"{self.prefix}nodes"

    def node(self, instance: str) -> str:
        """Hash: what a node instance says of itself (name, url, started; from 0.2.0 its
        release and the stored formats it reads: ``server/store/nodes/formats.py``)."""
        return f"{self.prefix}node:{instance}"

    def node_name(self, name: str) -> str:
        """String: the instance that holds node name ``name`` (one process at a time)."""
        return f"{self.prefix}node-name:{name}"

    def formats(self) -> str:
        """Set: the stored formats switched on, each once every live node read it; never
        switched off (``server/store/nodes/formats.py``)."""
        return f"{self.prefix}formats"

    def nodes_channel(self) -> str:
        """Pub/sub channel of the messages to every node."""
        return f"{self.prefix}nodes:chan"

    def node_channel(self, instance: str) -> str:
        """Pub/sub channel of the messages to one node instance."""
        return f"{self.prefix}node:{instance}:chan"

    # --- players ----------------------------------------------------------------

    def player_channel(self, player: str) -> str:
        """Pub/sub channel of the player's private frames (their own cards)."""
        return f"{self.prefix}player:{{{player}}}:chan"

    def player_seats(self, player: str) -> str:
        """Set: the tables where the player sits, as their holders last wrote it."""
        return f"{self.prefix}player:{{{player}}}:seats"

    def player_nodes(self, player: str) -> str:
        """Hash: node instance -> how many connections the player has there."""
        return f"{self.prefix}player:{{{player}}}:nodes"

    def game_log(self, player: str) -> str:
        """List: the player's game logs, newest first, capped."""
        return f"{self.prefix}log:{{{player}}}"

    def session(self, session_id: str) -> str:
        """Hash: a resumable session (player, name, guest), with a TTL."""
        return f"{self.prefix}session:{session_id}"

    def names(self) -> str:
        """Hash: player -> the display name of their last hello (for the operator)."""
        return f"{self.prefix}names"

    def revoked(self, player: str) -> str:
        """String: when an operator last ended the player's sessions (epoch ms)."""
        return f"{self.prefix}player:{{{player}}}:revoked"

    def revocations(self) -> str:
        """Pub/sub channel: players whose sessions were ended (every node closes them)."""
        return f"{self.prefix}sessions:revoked"

    # --- guests -----------------------------------------------------------------

    def guests(self) -> str:
        """Sorted set: guest players by their last activity (epoch ms)."""
        return f"{self.prefix}guests"

    def guests_created(self, minute: int) -> str:
        """Hash: guests created in epoch minute ``minute``, in total (field
        :data:`ALL_ADDRESSES`) and per client address (:func:`address_field`)."""
        return f"{self.prefix}guests:new:{minute}"

    # --- the operator's API -----------------------------------------------------

    def admin_tokens(self) -> str:
        """Hash: admin token id -> ``<name>|<expires s>|<minted s>`` (single-key commands)."""
        return f"{self.prefix}admin:tokens"

    # --- the archive ------------------------------------------------------------

    def archiver_lease(self) -> str:
        """String ``<owner>`` with a TTL: the process archiving now."""
        return f"{self.prefix}archiver"

    def archive_identity(self) -> str:
        """String: the identity of the archive that holds this Redis's old records."""
        return f"{self.prefix}archive"

    # --- the layout and what the first one left ---------------------------------

    def layout(self) -> str:
        """String: the key layout of this Redis (:data:`LAYOUT`; absent: the first)."""
        return f"{self.prefix}layout"

    def layout_lock(self) -> str:
        """String with a TTL: the process moving this Redis to :data:`LAYOUT`."""
        return f"{self.prefix}layout:lock"

    def legacy_money(self) -> str:
        """Hash: ``in``, chips credited under the first layout that no account counts."""
        return f"{self.prefix}money"

    def legacy_credits(self) -> str:
        """Hash: credit keys of the first layout whose player the migration did not find."""
        return f"{self.prefix}credits"


DEFAULT_KEYS = Keys()


@dataclass(frozen=True, slots=True)
class FirstLayout:
    """The names of the first key layout (no hash tags, one ledger for the product),
    which :mod:`server.store.migrate` moves from; under the same ``prefix``."""

    prefix: str = DEFAULT_PREFIX

    def table_keys(self, table_id: str) -> list[str]:
        """The fixed keys of a table: its hash, fence, lease and events (the ``applied``
        buckets are found by :meth:`applied_pattern`)."""
        base = f"{self.prefix}table:{table_id}"
        return [base, f"{base}:fence", f"{base}:lease", f"{base}:events"]

    def applied_pattern(self, table_id: str) -> str:
        """SCAN pattern of the table's ``applied`` buckets (``...:applied:<b>``)."""
        return f"{self.prefix}table:{table_id}:applied:*"

    def account(self, player: str) -> str:
        """Hash: the player's balance."""
        return f"{self.prefix}account:{player}"

    def ledger(self) -> str:
        """Stream: every chip movement of the product."""
        return f"{self.prefix}ledger"

    def money(self) -> str:
        """Hash: ``in`` (chips ever credited) and ``entries`` (ledger entries appended)."""
        return f"{self.prefix}money"

    def credits(self) -> str:
        """Hash: operator credit key -> ledger stream id."""
        return f"{self.prefix}credits"

    def request_pattern(self) -> str:
        """SCAN pattern of the request records, ``request:<player>:<h>`` (``h`` the
        SHA-256 of ``<session>:<rid>``, as now)."""
        return f"{self.prefix}request:*"

    def log_pattern(self) -> str:
        """SCAN pattern of the game logs, ``log:<player>`` (the new ``log:{p}`` match it
        too: their names have braces)."""
        return f"{self.prefix}log:*"


ALL_ADDRESSES = "*"
"""The field of :meth:`Keys.guests_created` that counts every address."""


def address_field(address: str) -> str:
    """The field of :meth:`Keys.guests_created` that counts one client address (its
    digest: an address is the client's to choose, behind a proxy's header)."""
    return _digest(address)[:16]


def applied_bucket(version: int) -> int:
    """The ``applied`` bucket of the commit that writes ``version``."""
    return version // APPLIED_WINDOW


def consults_previous(version: int) -> bool:
    """Whether the commit that writes ``version`` checks the bucket before its own: in
    the first half of a window only (see :data:`APPLIED_WINDOW`), one read a commit
    spared in the second half, and never in the first window, which has none before."""
    return version >= APPLIED_WINDOW and version % APPLIED_WINDOW < APPLIED_WINDOW // 2
