"""The `pyop` command line: thin Typer commands that parse flags and call `pyop_scaffold.commands`."""
