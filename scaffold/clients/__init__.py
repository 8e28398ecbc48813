"""`pyop make clients`: typed clientsets, informers, listers and fakes from `+genclient` tags (client-gen,
informer-gen and lister-gen in one generator)."""
