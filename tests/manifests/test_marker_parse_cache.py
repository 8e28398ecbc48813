"""Marker text parsed once: the same text written elsewhere gives an equal marker with its own location and its
own copy of any list or dict value; text that fails to parse fails again, at each place it is written."""

from __future__ import annotations

import pytest

from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers.parser import parse_marker

TEXTS = [
    "kubebuilder:validation:Enum=a;b;c",
    "kubebuilder:default={replicas: 1, ports: [80, 443]}",
    'kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=`.spec.replicas`',
    "kubebuilder:validation:Minimum=3",
    "kubebuilder:default=ref(SomeConstant)",
    "listType=map",
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_same_text_twice_gives_equal_markers_with_their_own_places_and_values(text: str) -> None:
    first = parse_marker(text, SourceLocation("a.py", 1))
    second = parse_marker(text, SourceLocation("b.py", 7))
    assert first is not None and second is not None
    assert (first.definition, first.value, first.items, first.text) == (
        second.definition,
        second.value,
        second.items,
        second.text,
    )
    assert (second.location.file, second.location.line) == ("b.py", 7)
    if isinstance(first.value, (list, dict)):
        assert first.value is not second.value
        first.value.clear()
        third = parse_marker(text, SourceLocation("c.py", 2))
        assert third is not None and third.value == second.value


def test_a_bad_marker_fails_at_every_place_it_is_written() -> None:
    for line in (3, 9):
        with pytest.raises(MarkerError) as caught:
            parse_marker("kubebuilder:validation:Minimum=three", SourceLocation("a.py", line))
        assert caught.value.location is not None and caught.value.location.line == line
