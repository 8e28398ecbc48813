"""The Helm chart of a project (`pyop edit --plugins=helm`), derived from what `kubectl kustomize config/default`
renders: one template per rendered object, values for the parts a user tunes, a schema for those values."""
