"""Fixtures live in informer_helpers (a uniquely named module, so tests can import its helpers too)."""

from informer_helpers import client_and_server, dynamic, server

__all__ = ["client_and_server", "dynamic", "server"]
