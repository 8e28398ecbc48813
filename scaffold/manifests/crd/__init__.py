"""CRD generation: `schema` turns models into structural OpenAPI schemas, `assemble` builds CRD objects."""
