"""kube-openapi's merge of aggregated Swagger documents, as `openapi_v2.merged` does it: shared definitions kept
once (GVK lists merged), a different definition of the same name renamed ``_v2`` with the references that use it,
a path the document already has left to the first spec, unreachable definitions of a cut spec dropped."""

from __future__ import annotations

from typing import Any

from pyop.testing.aggregator.openapi_v2 import GVK, filter_by_paths, merged

META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/definitions/{name}"}


def spec(paths: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    return {"swagger": "2.0", "info": {"title": "Kubernetes"}, "paths": paths, "definitions": definitions}


def path_to(name: str) -> dict[str, Any]:
    return {"get": {"responses": {"200": {"schema": ref(name)}}}}


OBJECT_META = {"type": "object", "properties": {"name": {"type": "string"}}}
LOCAL = spec({"/api/v1/pods": path_to("Pod")}, {"Pod": {"properties": {"metadata": ref(META)}}, META: OBJECT_META})


def test_equal_definitions_are_kept_once() -> None:
    wardle = spec(
        {"/apis/wardle/v1/flunders": path_to("Flunder")},
        {"Flunder": {"properties": {"metadata": ref(META)}}, META: dict(OBJECT_META)},
    )
    result = merged(LOCAL, [wardle])
    assert sorted(result["definitions"]) == ["Flunder", "Pod", META]
    assert result["definitions"]["Flunder"]["properties"]["metadata"] == ref(META)
    assert list(result["paths"]) == ["/api/v1/pods", "/apis/wardle/v1/flunders"]
    assert LOCAL["definitions"] == {"Pod": {"properties": {"metadata": ref(META)}}, META: OBJECT_META}  # untouched


def test_a_different_definition_of_the_same_name_is_renamed_with_its_references() -> None:
    other_meta = {"type": "object", "properties": {"name": {"type": "string"}, "colour": {"type": "string"}}}
    first = spec({"/apis/a/v1/xs": path_to("X")}, {"X": {"properties": {"metadata": ref(META)}}, META: other_meta})
    second = spec({"/apis/b/v1/ys": path_to("Y")}, {"Y": {"properties": {"metadata": ref(META)}}, META: other_meta})
    result = merged(LOCAL, [first, second])
    assert result["definitions"][META] == OBJECT_META
    assert result["definitions"][f"{META}_v2"] == other_meta
    assert f"{META}_v3" not in result["definitions"]  # the second reuses the first's rename
    assert result["definitions"]["X"]["properties"]["metadata"] == ref(f"{META}_v2")
    assert result["definitions"]["Y"]["properties"]["metadata"] == ref(f"{META}_v2")
    assert result["definitions"]["Pod"]["properties"]["metadata"] == ref(META)


def test_definitions_equal_but_for_their_gvks_are_one_with_both_gvks() -> None:
    gvk_a = {"group": "", "kind": "DeleteOptions", "version": "v1"}
    gvk_b = {"group": "wardle", "kind": "DeleteOptions", "version": "v1alpha1"}
    local = spec({"/api/v1/pods": path_to("Delete")}, {"Delete": {"type": "object", GVK: [gvk_a]}})
    wardle = spec({"/apis/wardle/v1alpha1/xs": path_to("Delete")}, {"Delete": {"type": "object", GVK: [gvk_b]}})
    result = merged(local, [wardle])
    assert result["definitions"]["Delete"][GVK] == [gvk_a, gvk_b]
    assert local["definitions"]["Delete"][GVK] == [gvk_a]


def test_a_path_the_document_has_stays_the_first_specs_and_its_definitions_are_not_merged() -> None:
    wardle = spec(
        {"/api/v1/pods": path_to("OtherPod"), "/apis/wardle/v1/flunders": path_to("Flunder")},
        {"OtherPod": {"type": "string"}, "Flunder": {"type": "object"}},
    )
    result = merged(LOCAL, [wardle])
    assert result["paths"]["/api/v1/pods"] == path_to("Pod")
    assert "OtherPod" not in result["definitions"]
    assert "Flunder" in result["definitions"]


def test_filter_keeps_the_definitions_the_kept_paths_reach_transitively() -> None:
    document = spec(
        {"/a": path_to("A"), "/b": path_to("B")},
        {"A": {"properties": {"inner": ref("Inner")}}, "Inner": {"type": "string"}, "B": {"type": "object"}},
    )
    cut = filter_by_paths(document, ["/a"])
    assert sorted(cut["definitions"]) == ["A", "Inner"]
    assert list(cut["paths"]) == ["/a"]
    assert sorted(document["definitions"]) == ["A", "B", "Inner"]


def test_a_spec_without_paths_adds_nothing() -> None:
    result = merged(LOCAL, [{"swagger": "2.0", "definitions": {"Lonely": {"type": "string"}}}])
    assert "Lonely" not in result["definitions"]
