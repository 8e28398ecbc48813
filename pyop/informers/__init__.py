"""Informers, cache and listers (client-go's `tools/cache` and `informers`, asyncio edition).

factory = SharedInformerFactory(client, namespaces=["ships"])
informer = factory.informer(Captain)
informer.add_event_handler(enqueue_keys(queue.add))
captains = factory.lister(Captain)
factory.start()
await factory.wait_for_cache_sync()
captain = captains.get("blackbeard", "ships")
"""

from pyop.informers.backoff import Backoff
from pyop.informers.factory import SharedInformerFactory
from pyop.informers.handlers import (
    FuncHandler,
    ObjectKey,
    ResourceEventHandler,
    deletion_handling_key,
    enqueue_keys,
    filtered,
)
from pyop.informers.informer import HandlerRegistration, Informer
from pyop.informers.lister import Lister, NamespaceLister
from pyop.informers.reflector import Reflector, ReflectorStats
from pyop.informers.store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    StringInterner,
    object_key,
    split_key,
    strip_managed_fields,
)

__all__ = [
    "NAMESPACE_INDEX",
    "Backoff",
    "DeletedFinalStateUnknown",
    "FuncHandler",
    "HandlerRegistration",
    "Indexer",
    "Informer",
    "Lister",
    "NamespaceLister",
    "ObjectKey",
    "Reflector",
    "ReflectorStats",
    "ResourceEventHandler",
    "SharedInformerFactory",
    "StringInterner",
    "deletion_handling_key",
    "enqueue_keys",
    "filtered",
    "object_key",
    "split_key",
    "strip_managed_fields",
]
