"""Authorizers: what an authorizer is asked about a request, and the decisions it answers."""
