
{% if cookiecutter.added_by == "webhook" %}    # Conversion to and from the hub version {{ cookiecutter.hub_version }} (pyop.webhook.Convertible), added by
    # `pyop create webhook --conversion`. The conversion webhook calls these to serve every version of the
    # kind from the one stored in etcd. Both copy the object through its wire form (what the API server
    # stores): each field the versions share, same name and type, comes across as it is. Translate the
    # others in `data` before it is validated: a field the target requires must be set, and one it does not
    # declare is kept as an undeclared field (the API server prunes it).
{% else %}    # Conversion to and from the hub version {{ cookiecutter.hub_version }} (pyop.webhook.Convertible), added by
    # `pyop create apiserver`. The aggregated server stores this kind in the hub's version and calls
    # these to serve {{ cookiecutter.spoke_version }}: every read converts from the hub, every write to it. Both
    # copy the object through its wire form: each field the versions share, same name and type, comes across as
    # it is. Translate the others in `data` before it is validated: a field the target requires must be set.
    # The stored metadata is kept whatever these return, except labels and annotations.
{% endif %}
    def convert_to(self) -> Hub{{ cookiecutter.kind }}:
        """This {{ cookiecutter.spoke_version }} {{ cookiecutter.kind }} as the hub version {{ cookiecutter.hub_version }}."""
        data = self.to_dict()
        data["apiVersion"] = Hub{{ cookiecutter.kind }}.resource_info.api_version
        # TODO(user): translate the fields that differ, e.g.
        #     data["spec"]["replicas"] = data["spec"].pop("size")
        return Hub{{ cookiecutter.kind }}.model_validate(data)

    @classmethod
    def convert_from(cls, hub: Hub{{ cookiecutter.kind }}) -> Self:
        """A {{ cookiecutter.spoke_version }} {{ cookiecutter.kind }} from the hub version {{ cookiecutter.hub_version }}."""
        data = hub.to_dict()
        data["apiVersion"] = cls.resource_info.api_version
        # TODO(user): translate the fields that differ, e.g.
        #     data["spec"]["size"] = data["spec"].pop("replicas")
        return cls.model_validate(data)
