"""Awaiting network calls from the synchronous registry: conversion webhooks in the middle of a read or a write.

The registry (``operations.py``) is synchronous, but kube-apiserver calls a CRD's conversion webhook wherever an
object crosses between the storage version and the version of a request: deep inside a get, a list, a watch
event, a create or an update. Such calls run the registry code in a ``Bridged`` greenlet; ``wait_for`` switches
back to its driver with an ``Awaited`` (a coroutine factory given the server's webhook caller), the driver
awaits it on the event loop and switches back in with the result or the error. Admission writes
(``admission.AdmittedWrite``) are bridged greenlets too, so a write meets admission points and conversions in
one run. Outside a bridge (the Python API, the server's own controllers) a conversion cannot be awaited and
``wait_for`` raises ``NotBridged``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from greenlet import GreenletExit, getcurrent, greenlet

T = TypeVar("T")

# A coroutine factory: given the server's WebhookCaller, the awaitable to run.
CallFactory = Callable[[Any], Awaitable[Any]]


class NotBridged(RuntimeError):
    """A network call was needed where the registry cannot wait for one (not inside a request)."""


class Bridged(greenlet):  # type: ignore[misc]  # greenlet ships no precise stubs for subclassing
    """Registry code that may wait for the network (its parent is the driver that awaits for it)."""


@dataclass(slots=True)
class Awaited:
    """A call handed to the driver; the driver answers with ``settle``'s outcome."""

    factory: CallFactory

    async def settle(self, caller: Any) -> Outcome:
        try:
            return Outcome(await self.factory(caller), None)
        except Exception as error:  # handed back into the greenlet and raised there
            return Outcome(None, error)


@dataclass(slots=True)
class Outcome:
    value: Any
    error: Exception | None


def bridged() -> bool:
    """Whether ``wait_for`` can be used here."""
    return isinstance(getcurrent(), Bridged)


def wait_for(factory: CallFactory) -> Any:
    """The result of ``await factory(caller)``, from synchronous code running in a bridge; raises its error."""
    current = getcurrent()
    if not isinstance(current, Bridged):
        raise NotBridged("a webhook call is needed outside of a request to the test API server")
    outcome = current.parent.switch(Awaited(factory))
    if not isinstance(outcome, Outcome):  # pragma: no cover - a driver answering something else is a bug
        raise TypeError(f"the bridge's driver answered {outcome!r}")
    if outcome.error is not None:
        raise outcome.error
    return outcome.value


async def run(function: Callable[..., T], *args: Any, caller: Any) -> T:
    """``function(*args)`` in a bridge, its ``wait_for`` calls awaited with ``caller``; returns its result."""
    child = Bridged(function)
    try:
        value = child.switch(*args)
        while not child.dead:
            if not isinstance(value, Awaited):  # pragma: no cover - only admission writes suspend otherwise
                raise TypeError(f"a bridged call suspended with {value!r}")
            value = child.switch(await value.settle(caller))
        return value  # type: ignore[no-any-return]
    finally:
        if not child.dead:  # cancelled while awaiting: unwind the suspended call
            child.throw(GreenletExit)
