"""Work queues and rate limiters with client-go's names and semantics (``k8s.io/client-go/util/workqueue``).

* :class:`WorkQueue` - deduplicating FIFO; an item is processed by one worker at a time.
* :class:`DelayingQueue` - adds :meth:`~DelayingQueue.add_after`.
* :class:`RateLimitingQueue` - adds :meth:`~RateLimitingQueue.add_rate_limited`, ``forget``, ``num_requeues``.
* Rate limiters: :class:`BucketRateLimiter`, :class:`ItemExponentialFailureRateLimiter`,
  :class:`ItemFastSlowRateLimiter`, :class:`MaxOfRateLimiter`, :class:`WithMaxWaitRateLimiter`,
  :func:`default_controller_rate_limiter`.
* Time: :class:`RealClock`, :class:`FakeClock` (tests).
* Metrics: :class:`MetricsProvider` protocol, :func:`set_provider`, :class:`PrometheusMetricsProvider`.

See docs/runtime/workqueue.md for a controller loop.
"""

from pyop.workqueue.clock import Clock, FakeClock, RealClock, Timer
from pyop.workqueue.delaying import DelayingQueue
from pyop.workqueue.metrics import (
    CounterMetric,
    GaugeMetric,
    HistogramMetric,
    MetricsProvider,
    SettableGaugeMetric,
    get_provider,
    set_provider,
)
from pyop.workqueue.prometheus import PrometheusMetricsProvider
from pyop.workqueue.queue import ShutDown, WorkQueue
from pyop.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from pyop.workqueue.rate_limiting import RateLimitingQueue

__all__ = [
    "BucketRateLimiter",
    "Clock",
    "CounterMetric",
    "DelayingQueue",
    "FakeClock",
    "GaugeMetric",
    "HistogramMetric",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "MetricsProvider",
    "PrometheusMetricsProvider",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "SettableGaugeMetric",
    "ShutDown",
    "Timer",
    "WithMaxWaitRateLimiter",
    "WorkQueue",
    "default_controller_rate_limiter",
    "get_provider",
    "set_provider",
]
