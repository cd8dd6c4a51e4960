"""``python -m server``: the same as ``paigow-server``."""

from server.cli import main

raise SystemExit(main())
