"""The manager Deployment as a template: what a user tunes comes from `manager:` in values.yaml.

Defaults are the rendered Deployment's own fields, so the default chart renders the Deployment kustomize renders.
Fields kustomize leaves out but users set per cluster (node selector, tolerations, affinity, image pull secrets,
pull policy) are offered empty and rendered only when set. The container's webhook pieces (the serving port, the
certificate's volume and mount, the `--webhook-*` flags) are rendered only with `webhook.enable`, so a chart with the
webhooks off does not wait for a certificate Secret nobody makes.
"""

from __future__ import annotations

from typing import Any

from pyop_scaffold.chart.yamltpl import Template

MANAGER_CONTAINER = "manager"
# Offered in values even when the rendered Deployment does not set them (rendered only when not empty).
OPTIONAL_POD_FIELDS: dict[str, Any] = {"nodeSelector": {}, "tolerations": [], "affinity": {}, "imagePullSecrets": []}


def is_manager(obj: dict[str, Any]) -> bool:
    """The Deployment with a container named `manager` (the first Deployment with containers otherwise)."""
    return obj.get("kind") == "Deployment" and _container(obj) is not None


def _container(obj: dict[str, Any]) -> dict[str, Any] | None:
    containers = ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []
    named = [c for c in containers if isinstance(c, dict) and c.get("name") == MANAGER_CONTAINER]
    return named[0] if named else None


def templatize_manager(obj: dict[str, Any], tpl: Template, webhooks: bool) -> dict[str, Any]:
    """Edit the Deployment `obj` in place into a template; returns the `manager:` values it reads."""
    values: dict[str, Any] = {}
    spec = obj["spec"]
    pod = spec["template"]["spec"]
    container = _container(obj)
    assert container is not None
    if isinstance(spec.get("replicas"), int):
        values["replicas"] = spec["replicas"]
        spec["replicas"] = tpl.inline("{{ .Values.manager.replicas }}")
    values["image"] = _image_values(str(container.get("image", "")), container.get("imagePullPolicy"))
    _replace_key(
        container,
        "image",
        tpl.inline(
            '"{{ .Values.manager.image.repository }}{{ with .Values.manager.image.digest }}@{{ . }}'
            '{{ else }}:{{ .Values.manager.image.tag }}{{ end }}"'
        ),
    )
    _set_optional(container, "imagePullPolicy", tpl, "manager.image.pullPolicy", scalar=True, after="image")
    webhook_flag = _webhook_flag(container.get("args") or [], webhooks)
    plain_args = [a for a in container.get("args") or [] if a not in webhook_flag]
    values["args"] = plain_args
    args_token = tpl.block(_args_lines(webhook_flag))
    if "args" in container:
        _rename_key(container, "args", args_token)
    else:
        _insert_after(container, args_token, None, "image")
    for field, section in (("env", "env"), ("resources", "resources"), ("securityContext", "securityContext")):
        values[section] = container.get(field) if container.get(field) is not None else _empty(field)
        _set_optional(container, field, tpl, f"manager.{section}")
    values["podSecurityContext"] = pod.get("securityContext") or {}
    _set_optional(pod, "securityContext", tpl, "manager.podSecurityContext")
    for field, empty in OPTIONAL_POD_FIELDS.items():
        values[field] = pod.get(field) if pod.get(field) is not None else empty
        _set_optional(pod, field, tpl, f"manager.{field}")
    if webhooks:
        _gate_webhook_items(container, pod, webhook_flag, tpl)
    return values


def _empty(field: str) -> Any:
    return [] if field == "env" else {}


def _image_values(image: str, pull_policy: object) -> dict[str, str]:
    """`repo[:tag][@digest]`; a port in the registry host (`host:5000/repo`) is not a tag."""
    repository, _, digest = image.partition("@")
    tag = ""
    head, sep, last = repository.rpartition(":")
    if sep and "/" not in last:
        repository, tag = head, last
    values = {"repository": repository, "tag": tag, "digest": digest}
    values["pullPolicy"] = pull_policy if isinstance(pull_policy, str) else ""
    return values


def _replace_key(mapping: dict[str, Any], key: str, value: Any) -> None:
    """Put `value` where `key` was (keeping the key order), or at the end."""
    mapping[key] = value


def _insert_after(mapping: dict[str, Any], key: str, value: Any, after: str | None) -> None:
    items = list(mapping.items())
    mapping.clear()
    placed = False
    for existing, existing_value in items:
        mapping[existing] = existing_value
        if existing == after:
            mapping[key] = value
            placed = True
    if not placed:
        mapping[key] = value


def _set_optional(
    mapping: dict[str, Any], field: str, tpl: Template, path: str, *, scalar: bool = False, after: str | None = None
) -> None:
    """`field` rendered from `.Values.<path>` when that value is not empty, in the field's place."""
    if scalar:
        lines = [f"{{{{- with .Values.{path} }}}}", f"{field}: {{{{ . }}}}", "{{- end }}"]
    else:
        lines = [f"{{{{- with .Values.{path} }}}}", f"{field}:", "  {{- toYaml . | nindent {child} }}", "{{- end }}"]
    token = tpl.block(lines)
    if field in mapping:
        _rename_key(mapping, field, token)
    else:
        _insert_after(mapping, token, None, after)


def _rename_key(mapping: dict[str, Any], old: str, new: str) -> None:
    items = list(mapping.items())
    mapping.clear()
    for key, value in items:
        if key == old:
            mapping[new] = None
        else:
            mapping[key] = value


def _webhook_flag(args: list[Any], webhooks: bool) -> list[str]:
    return [a for a in args if webhooks and isinstance(a, str) and a.startswith("--webhook-")]


def _args_lines(webhook_args: list[str]) -> list[str]:
    condition = ".Values.manager.args"
    if webhook_args:
        condition = "or .Values.manager.args .Values.webhook.enable"
    lines = [f"{{{{- if {condition} }}}}", "args:", "{{- range .Values.manager.args }}", "- {{ toJson . }}"]
    lines.append("{{- end }}")
    if webhook_args:
        lines.append("{{- if .Values.webhook.enable }}")
        lines.extend(f"- {_json(a)}" for a in webhook_args)
        lines.append("{{- end }}")
    lines.append("{{- end }}")
    return lines


def _json(value: str) -> str:
    import json

    return json.dumps(value)


def _gate_webhook_items(container: dict[str, Any], pod: dict[str, Any], flags: list[str], tpl: Template) -> None:
    """Wrap the webhook port, the certificate mount and its volume in `{{- if .Values.webhook.enable }}`."""
    cert_paths = {f.partition("=")[2] for f in flags if f.startswith("--webhook-cert-path=")}
    ports = container.get("ports") or []
    _gate(ports, [p for p in ports if isinstance(p, dict) and p.get("name") == "webhook-server"], tpl)
    mounts = container.get("volumeMounts") or []
    gated_mounts = [m for m in mounts if isinstance(m, dict) and m.get("mountPath") in cert_paths]
    _gate(mounts, gated_mounts, tpl)
    volume_names = {m.get("name") for m in gated_mounts}
    volumes = pod.get("volumes") or []
    _gate(volumes, [v for v in volumes if isinstance(v, dict) and v.get("name") in volume_names], tpl)


def _gate(items: list[Any], gated: list[Any], tpl: Template) -> None:
    """Surround each item of `gated` (in the list `items`) with the webhook condition, in place."""
    for item in gated:
        index = next(i for i, existing in enumerate(items) if existing is item)
        items.insert(index + 1, tpl.block(["{{- end }}"]))
        items.insert(index, tpl.block(["{{- if .Values.webhook.enable }}"]))
