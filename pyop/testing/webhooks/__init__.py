"""Admission webhooks as kube-apiserver calls them: configurations, dispatch, the HTTPS client, local install."""
