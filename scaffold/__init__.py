"""pyop scaffolder: the `pyop` CLI, project templates and the manifest generator (dev-time only)."""
