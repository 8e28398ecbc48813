"""Admission: where a write stops so that admission plugins (webhooks) can see, change or refuse the object."""
