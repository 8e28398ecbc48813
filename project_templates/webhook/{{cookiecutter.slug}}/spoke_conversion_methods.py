
    # Conversion to and from the hub version {{ cookiecutter.version }} (pyop.webhook.Convertible), added by
    # `pyop create webhook --conversion`. The conversion webhook calls these to serve every version of the kind
    # from the one stored in etcd; copy each field, translating those that differ between the versions.

    def convert_to(self) -> Hub{{ cookiecutter.kind }}:
        """This {{ cookiecutter.spoke_version }} {{ cookiecutter.kind }} as the hub version {{ cookiecutter.version }}."""
        hub = Hub{{ cookiecutter.kind }}(metadata=self.metadata.model_copy(deep=True))
        # TODO(user): copy spec and status to the hub, e.g. `hub.spec.foo = self.spec.foo`.
        return hub

    @classmethod
    def convert_from(cls, hub: Hub{{ cookiecutter.kind }}) -> Self:
        """A {{ cookiecutter.spoke_version }} {{ cookiecutter.kind }} from the hub version {{ cookiecutter.version }}."""
        obj = cls(metadata=hub.metadata.model_copy(deep=True))
        # TODO(user): copy spec and status from the hub, e.g. `obj.spec.foo = hub.spec.foo`.
        return obj
