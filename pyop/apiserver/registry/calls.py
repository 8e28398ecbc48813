"""The failure of a call the API server makes out (an admission or conversion webhook).

Its text is kube-apiserver's reason, put into the error the client gets (``failed calling webhook ...: <reason>``,
``conversion webhook for ... failed: <reason>``). The callers (the test API server's webhook client) raise it; the
generic registry's conversion catches it, so it lives here rather than with either.
"""

from __future__ import annotations


class CallFailed(Exception):
    """The webhook could not be called or answered nonsense; the text is kube-apiserver's reason."""


__all__ = ["CallFailed"]
