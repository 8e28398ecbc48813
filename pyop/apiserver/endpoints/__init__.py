"""HTTP and wire formats: routing, handlers, wire encoding, watch streams, discovery, OpenAPI, Table output."""
