"""The parts a node runs only when they are configured: the operator's API
(``--admin-port``) and the wallet (``--wallet-url``).

Their modules are imported here, when a node is started with them, not when the server
loads: aiohttp (and, through the operator's JWTs, PyJWT and cryptography) take a few
hundred milliseconds to import, which a restart after a crash spends before it serves
again (docs/DESIGN.md, "Start time").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.admin.auth import BearerCheck
    from server.admin.server import AdminServer
    from server.archive import Archive
    from server.auth.operator_jwt import OperatorTokens
    from server.config import Settings
    from server.store import Stores
    from server.wallet import Funding


def operator_api(
    settings: Settings,
    stores: Stores,
    secret: bytes,
    *,
    table_ids: Callable[[], Sequence[str]],
    instance: str,
    archive: Archive | None,
    bearer: BearerCheck | None,
    operator_tokens: OperatorTokens | None,
) -> AdminServer:
    """The operator's API of a node (not started): ``bearer`` checks the bearer tokens
    that are not admin tokens; without one, an operator's JWT with the admin role opens
    the API too when ``operator_tokens`` checks them. In wallet mode its audit adds the
    wallet's sums."""
    from server.admin.auth import jwt_bearer
    from server.admin.server import AdminServer
    from server.admin.tables import catalog_routes
    from server.wallet.commands import audit_wallet

    if bearer is None and operator_tokens is not None:
        bearer = jwt_bearer(operator_tokens)
    return AdminServer(
        stores,
        secret,
        table_ids=table_ids,
        instance=instance,
        archive=archive,
        bearer=bearer,
        audit_extra=partial(audit_wallet, settings, stores) if settings.wallet_url else None,
        extra_routes=catalog_routes(stores.catalog),
    )


def wallet(settings: Settings, stores: Stores) -> Funding:
    """Wallet mode's money path (not started): buy-ins and cash-outs through the
    operator's wallet."""
    from server.wallet import wallet_funding

    return wallet_funding(settings, stores)
