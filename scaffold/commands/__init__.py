"""What each CLI command does, as functions tests can call: they validate, plan a ChangeSet and apply it."""
