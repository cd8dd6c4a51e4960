"""The flags and ``PAIGOW_*`` variables made from the declarations of
:class:`~server.config.settings.Settings`, and the settings read back from them."""

from __future__ import annotations

import argparse
import os
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from server.config.secret_files import FILE_SUFFIX, SECRET_SETTINGS, read_secret_file
from server.config.settings import Settings
from server.config.values import boolean, parser_of, words

ENV_PREFIX = "PAIGOW_"


@dataclass(frozen=True, slots=True)
class Declared:
    """One setting as declared: what the flag, the variable and ``--help`` are made of."""

    name: str
    flag: str
    env: str
    help: str
    default: Any
    shown: str
    parse: Callable[[str], Any]  # one value, from a flag or a variable (each of a list's)
    many: bool  # a list: the flag repeats, the variable is comma-separated
    secret: bool = False  # also read from the file named by the variable + _FILE

    def from_env(self, environ: Mapping[str, str]) -> Any:
        """The variable's value, parsed (the default when unset or empty), or for a
        secret the content of the file its ``_FILE`` variable names; raises
        ``argparse.ArgumentTypeError`` when it does not parse or cannot be read."""
        text = environ.get(self.env)
        path = environ.get(self.env + FILE_SUFFIX) if self.secret else None
        if path:
            if text:
                raise argparse.ArgumentTypeError(
                    f"set {self.env} or {self.env}{FILE_SUFFIX}, not both"
                )
            text = read_secret_file(self.env, path)
        if not text:
            return self.default
        return tuple(self.parse(w) for w in words(text)) if self.many else self.parse(text)


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def declared() -> list[Declared]:
    """Every setting, in declaration order."""
    hints = typing.get_type_hints(Settings)
    out = []
    for f in fields(Settings):
        parse, many = parser_of(hints[f.name])
        parse = f.metadata["parse"] or parse
        out.append(
            Declared(
                name=f.name,
                flag=f.metadata["flag"] or "--" + f.name.replace("_", "-"),
                env=ENV_PREFIX + f.name.upper(),
                help=f.metadata["help"],
                default=f.default,
                shown=f.metadata["shown"] or _shown(f.default),
                parse=parse,
                many=many,
                secret=f.name in SECRET_SETTINGS,
            )
        )
    return out


def add_arguments(
    parser: argparse.ArgumentParser, environ: Mapping[str, str] | None = None
) -> None:
    """Add a flag per setting to ``parser``, each defaulting to its ``PAIGOW_*``
    variable in ``environ`` (default: the process's). A variable that does not parse
    is a usage error now (``parser.error``: exit 2), even before ``--help``."""
    env = os.environ if environ is None else environ
    for d in declared():
        try:
            default = d.from_env(env)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"{d.env}: {exc}")
        # argparse formats help with %: a literal one is written %%.
        names = f"{d.env} or {d.env}{FILE_SUFFIX}" if d.secret else d.env
        text = f"{d.help} [{names}; default: {d.shown}]".replace("%", "%%")
        if d.many:
            # Repeated flags replace the variable's list (a flag wins): None tells them apart.
            parser.add_argument(
                d.flag,
                dest=d.name,
                action="append",
                type=d.parse,
                default=None,
                metavar=d.flag.lstrip("-").upper(),
                help=text,
            )
            parser.set_defaults(**{f"{d.name}_from_env": default})
        else:
            metavar = "yes/no" if d.parse is boolean else d.name.upper()
            parser.add_argument(
                d.flag, dest=d.name, type=d.parse, default=default, metavar=metavar, help=text
            )


def from_arguments(args: argparse.Namespace) -> Settings:
    """Settings from flags parsed by a parser :func:`add_arguments` made."""
    values = {}
    for d in declared():
        value = getattr(args, d.name)
        if d.many:
            value = tuple(value) if value is not None else getattr(args, f"{d.name}_from_env")
        values[d.name] = value
    return Settings(**values)
