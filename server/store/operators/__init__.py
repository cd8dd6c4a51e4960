"""What the store keeps for the operator's API (:mod:`server.admin`): its tokens."""
