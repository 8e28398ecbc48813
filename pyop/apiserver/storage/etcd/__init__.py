"""etcd v3 storage: a JSON-gateway client (``client``), the backend (``backend``), a local etcd (``local``)."""
