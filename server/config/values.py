"""How one value of a setting is parsed from its text (a flag's, or a variable's), each
parser raising ``argparse.ArgumentTypeError`` with what is wrong."""

from __future__ import annotations

import argparse
import ipaddress
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def boolean(text: str) -> bool:
    """yes/no, true/false, on/off or 1/0, in any case."""
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not a boolean (yes/no)")


def whole_number(text: str) -> int:
    """A whole number (``1.5`` is not one)."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def words(text: str) -> tuple[str, ...]:
    """A variable's comma-separated list: each entry stripped, empty ones left out."""
    return tuple(word.strip() for word in text.split(",") if word.strip())


def network(text: str) -> str:
    """An address or a CIDR (``10.0.0.5``, ``172.16.0.0/12``, ``::1``), kept as written:
    checked here so that a bad one is a usage error, not a failure of the gateway's
    start, which reads it (:func:`server.gateway.address.networks`)."""
    try:
        ipaddress.ip_network(text.strip(), strict=False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an address or a CIDR") from None
    return text


_PARSERS: Mapping[Any, Callable[[str], Any]] = {
    str: str,
    int: whole_number,
    bool: boolean,
    Path: Path,
}


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.lower() not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return text.lower()

    return parse


def parser_of(hint: Any) -> tuple[Callable[[str], Any], bool]:
    """How to parse one value of type ``hint``, and whether it is a list."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Literal:
        return _choice(args), False
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        (inner,) = (a for a in args if a is not type(None))
        return parser_of(inner)
    if typing.get_origin(hint) is tuple:
        return str, True
    return _PARSERS[hint], False
