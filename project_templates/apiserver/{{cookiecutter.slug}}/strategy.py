{{ cookiecutter.license_header }}"""How the aggregated API server admits and shows a {{ cookiecutter.kind }} (k8s.io/apiserver's REST strategy).

The generic registry already does what every kind gets: pruning, defaults and validation from the model's schema,
metadata rules, resourceVersion preconditions, generation, finalizers, and the status subresource (spec is kept
out of status writes and status out of main-resource writes). The hooks below add what is particular to
{{ cookiecutter.kind }}; each receives the object as your model. Fill them in or delete the ones you do not need (an
unused hook costs nothing).
"""

from __future__ import annotations

from typing import Any

from pyop.apiserver import FieldError, Strategy, TableColumn

{{ cookiecutter.types_import }}


class {{ cookiecutter.kind }}Strategy(Strategy[{{ cookiecutter.kind }}]):
    """Defaulting, validation and table columns of {{ cookiecutter.plural }}.{{ cookiecutter.qualified_group }}."""

    def prepare_for_create(self, obj: {{ cookiecutter.kind }}) -> None:
        """Fields a client may not choose on create: a new object starts without status."""
        obj.status = None

    def prepare_for_update(self, obj: {{ cookiecutter.kind }}, old: {{ cookiecutter.kind }}) -> None:
        """Fields a client may not change on update (`old` is the stored object)."""

    def default(self, obj: {{ cookiecutter.kind }}) -> None:
        """Defaults that need code (plain defaults belong in the model as field defaults)."""
        # TODO(user): set your defaults, e.g. derived from other fields.

    def validate(self, obj: {{ cookiecutter.kind }}) -> list[FieldError]:
        """Field errors of a new object; an empty list admits it (a 422 Invalid names each error otherwise)."""
        errors: list[FieldError] = []
        # TODO(user): your checks, e.g.
        # if obj.spec.foo == "":
        #     errors.append(FieldError.required("spec.foo", "must not be empty"))
        return errors

    def validate_update(self, obj: {{ cookiecutter.kind }}, old: {{ cookiecutter.kind }}) -> list[FieldError]:
        """Field errors of an update (immutable fields are checked here); by default the same as a create's."""
        return self.validate(obj)

    def table_columns(self) -> list[TableColumn] | None:
        """The columns `kubectl get {{ cookiecutter.plural }}` prints after NAME (None: the printcolumn markers, or AGE)."""
        return [
            TableColumn("Foo", json_path=".spec.foo", description="The example field."),
            TableColumn("Age", type="date", json_path=".metadata.creationTimestamp"),
        ]

    def table_cells(self, obj: {{ cookiecutter.kind }}) -> list[Any] | None:
        """The cells of the columns without a json_path, in order (None: every column has one)."""
        return None
