"""The pieces of the generator without helm: the three-way values merge, sealing, image references, `{{` escaping."""

from __future__ import annotations

import pytest

from pyop_scaffold.chart import seal, values
from pyop_scaffold.chart.manager import _image_values
from pyop_scaffold.chart.yamltpl import escape_actions
from pyop_scaffold.errors import ProjectError


def test_merge_keeps_user_changes_and_follows_the_rest() -> None:
    base = {"manager": {"replicas": 1, "image": {"tag": "v1"}, "args": ["--a"]}, "crd": {"enable": True}, "old": 1}
    new = {"manager": {"replicas": 1, "image": {"tag": "v2"}, "args": ["--a", "--b"]}, "crd": {"enable": True},
           "webhook": {"enable": True}}  # fmt: skip
    user = (
        "# my comment\n"
        "manager:\n"
        "  replicas: 4  # spares\n"
        "  image:\n"
        "    tag: v1\n"
        "  args: [--a]\n"
        "crd:\n"
        "  enable: false\n"
        "old: 1\n"
        "mine: {x: 1}\n"
    )
    merged = values.merge(user, base, new, "values.yaml")
    assert merged.startswith("# my comment\n")
    assert "  replicas: 4  # spares\n" in merged
    import yaml

    data = yaml.safe_load(merged)
    assert data["manager"]["image"]["tag"] == "v2"  # untouched: follows config
    assert data["manager"]["args"] == ["--a", "--b"]
    assert data["crd"]["enable"] is False  # the user's
    assert data["webhook"] == {"enable": True}  # new in config
    assert "old" not in data  # gone from config, untouched by the user
    assert data["mine"] == {"x": 1}  # the user's own key


def test_merge_leaves_out_what_the_user_removed() -> None:
    base = {"manager": {"replicas": 1}, "crd": {"enable": True}}
    merged = values.merge("manager:\n  replicas: 1\n", base, base, "values.yaml")
    assert "crd" not in merged


def test_merge_names_a_values_file_that_is_not_a_mapping() -> None:
    with pytest.raises(ProjectError, match="values.yaml: it is not a mapping"):
        values.merge("- a\n", {}, {}, "values.yaml")


def test_a_sealed_file_is_pristine_until_edited() -> None:
    text = seal.seal(f"# header {seal.PLACEHOLDER}\nkey: value\n")
    assert seal.is_pristine(text)
    assert not seal.is_pristine(text.replace("value", "other"))
    assert not seal.is_pristine(text + "# a comment\n")
    assert not seal.is_pristine("key: value\n")
    assert seal.seal(f"# header {seal.PLACEHOLDER}\nkey: value\n") == text


@pytest.mark.parametrize(
    ("image", "repository", "tag", "digest"),
    [
        ("controller:latest", "controller", "latest", ""),
        ("controller", "controller", "", ""),
        ("registry.example.com:5000/team/op", "registry.example.com:5000/team/op", "", ""),
        ("registry.example.com:5000/team/op:v1", "registry.example.com:5000/team/op", "v1", ""),
        ("op:v1@sha256:" + "a" * 64, "op", "v1", "sha256:" + "a" * 64),
    ],
)
def test_image_references_split_into_values(image: str, repository: str, tag: str, digest: str) -> None:
    got = _image_values(image, None)
    assert (got["repository"], got["tag"], got["digest"], got["pullPolicy"]) == (repository, tag, digest, "")


def test_literal_double_braces_are_escaped_for_helm() -> None:
    assert escape_actions("a {{ b }} {{c}}") == 'a {{ "{{" }} b }} {{ "{{" }}c}}'
