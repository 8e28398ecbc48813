"""Authenticators: who a request comes from (bearer tokens, request-header client certificates)."""
