"""`treerag keys`: the gateway's API keys (the command is the gateway's own, services/gateway/keys.py,
so that a gateway container without this CLI runs it as `python -m services.gateway.keys`)."""

from __future__ import annotations

from services.gateway.keys import register

__all__ = ["register"]
