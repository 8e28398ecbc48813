"""Code generators whose output is committed to pyop itself (not to users' projects): typed built-in models."""
