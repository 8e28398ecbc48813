"""The PROJECT file model, name validation, and where each file of a kind lives."""
