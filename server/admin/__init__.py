"""The operator's console and API: an authenticated HTTP server on a port of its own
(:mod:`server.admin.server`), its routes (:mod:`server.admin.api`), what they and the
``paigow-server`` commands do (:mod:`server.admin.operations`), who may call them
(:mod:`server.admin.auth`, :mod:`server.admin.tokens`) and the console's page
(``static/``). docs/DESIGN.md, "The operator's API and console".
"""
