"""A connection's real client address, as every per-address limit counts it.

Behind a balancer every connection comes from the balancer's own address; the balancer
passes the client's in a request header (``X-Forwarded-For`` by default, or RFC 7239's
``Forwarded``). A header is believed only from a peer in the configured trusted proxies:
from anyone else it is ignored (anyone can write one), and the peer's own address counts.

The header's addresses are read from the right, the last one appended first: each
trusted proxy appends the address it saw, so the first address from the right that is
not itself a trusted proxy is the client's (what is left of it, the client may have
written). An entry that is not an address (``unknown``, an obfuscated name, garbage)
stops the reading: the last trusted hop's address counts.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeAlias

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network
Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address


def networks(entries: Iterable[str]) -> tuple[Network, ...]:
    """Addresses or CIDRs (``10.0.0.5``, ``172.16.0.0/12``, ``::1``) as networks;
    ValueError naming the entry that is neither."""
    out = []
    for entry in entries:
        try:
            out.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an address or a CIDR") from None
    return tuple(out)


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:1.2.3.4 is 1.2.3.4 (a dual-stack socket)
    return address


def _forwarded_for(values: list[str]) -> list[str]:
    """The ``for=`` of each element of RFC 7239 ``Forwarded`` header values, in order,
    without quotes, brackets and ports (an element with none: an empty string)."""
    out = []
    for value in values:
        for element in value.split(","):
            found = ""
            for pair in element.split(";"):
                name, _, text = pair.partition("=")
                if name.strip().lower() != "for":
                    continue
                text = text.strip().strip('"')
                if text.startswith("["):  # [v6] or [v6]:port
                    text = text[1:].partition("]")[0]
                elif text.count(":") == 1:  # v4:port
                    text = text.partition(":")[0]
                found = text
            out.append(found)
    return out


class ClientAddresses:
    """Which address a connection counts under (see the module docstring).

    ``trusted``: the proxies whose ``header`` is believed (none: the header is never
    read). ``header``: ``X-Forwarded-For`` (or another header of that form: addresses
    separated by commas) or ``Forwarded``."""

    __slots__ = ("forwarded", "header", "trusted")

    def __init__(self, trusted: Iterable[str] = (), header: str = "X-Forwarded-For") -> None:
        self.trusted = networks(trusted)
        self.header = header
        self.forwarded = header.strip().lower() == "forwarded"

    def is_trusted(self, address: Address) -> bool:
        """Whether ``address`` is one of the trusted proxies."""
        return any(address in network for network in self.trusted)

    def of(self, peer: str | None, header_values: list[str]) -> str | None:
        """The client's address, given the connection's own (``peer``; None on a unix
        socket) and the values of the configured header in the request (each line)."""
        if peer is None or not self.trusted:
            return peer
        hop = _address(peer)
        if hop is None or not self.is_trusted(hop):
            return peer
        if self.forwarded:
            entries = _forwarded_for(header_values)
        else:
            entries = [e.strip() for value in header_values for e in value.split(",")]
        for entry in reversed(entries):
            address = _address(entry)
            if address is None:
                break  # not an address: the last trusted hop's counts
            hop = address
            if not self.is_trusted(address):
                break
        return str(hop)
