"""Fixtures live in client_helpers (a uniquely named module, so tests can import its helpers too)."""

from client_helpers import client, server, sleeps

__all__ = ["client", "server", "sleeps"]
