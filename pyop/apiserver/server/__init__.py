"""Serving: the composition of the request stages into an aiohttp application, and TLS."""
