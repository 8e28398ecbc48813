"""pyop scaffolder: the `pyop` CLI, project templates and the manifest generator (dev-time only)."""

__version__ = "0.1.0"
