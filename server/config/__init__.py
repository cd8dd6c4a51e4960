"""The server's settings, each declared once: a field of :class:`Settings` with its
type, default and help text.

The ``paigow-server`` flags and the ``PAIGOW_*`` environment variables are made from
those declarations (:func:`add_arguments`): a flag wins over its variable, a variable
over the default, and an empty variable counts as unset (as compose files often leave
it). A value that does not parse is a usage error (exit 2) naming the flag or the
variable; ``paigow-server --help`` lists every flag with its variable and default.

The package's rooms: :mod:`~server.config.settings` (``Settings``, the declarations),
:mod:`~server.config.flags` (the flags and variables made from them, and settings read
back), :mod:`~server.config.values` (how one value is parsed and checked) and
:mod:`~server.config.secret_files` (secrets read from ``*_FILE``).
"""

from server.config.flags import ENV_PREFIX, Declared, add_arguments, declared, from_arguments
from server.config.secret_files import FILE_SUFFIX, SECRET_SETTINGS, read_secret_file
from server.config.settings import Settings, about, redacted_url

__all__ = [
    "ENV_PREFIX",
    "FILE_SUFFIX",
    "SECRET_SETTINGS",
    "Declared",
    "Settings",
    "about",
    "add_arguments",
    "declared",
    "from_arguments",
    "read_secret_file",
    "redacted_url",
]
