"""Turning templates into files and files into a project: render to memory, plan, then apply all or nothing."""
