"""``python -m server.cli``: the same as ``paigow-server``."""

from server.cli.serve import main

raise SystemExit(main())
