"""Edits of files shared between scaffolds, done so that the user's own lines and comments survive."""
