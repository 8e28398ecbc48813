"""The `pyop` command line: thin Typer commands that parse flags and call `scaffold.commands`."""
