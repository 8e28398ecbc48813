"""pyop runtime: what a generated operator imports at run time (models, clients, queues, informers, manager)."""

__version__ = "0.1.0"
