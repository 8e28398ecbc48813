"""Storage: the in-memory watch cache (`store.Store`) and the durable backends beneath it."""
