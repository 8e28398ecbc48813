"""Quantities in kube-apiserver's canonical form (apimachinery's Quantity.CanonicalizeBytes), in pyop.api.quantity."""

from __future__ import annotations

import pytest

from pyop.api.quantity import QUANTITY_FORMAT_ERROR, QuantityError, canonical_quantity, parse_quantity


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("0.5", "500m"),
        (0.5, "500m"),
        (2, "2"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("2000000k", "2G"),
        ("100M", "100M"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("1Ki", "1Ki"),
        ("0.5Ki", "512"),  # binary values below 1024 are written in decimal
        ("1e3", "1e3"),
        ("1E3", "1e3"),
        ("1.5e3", "1500"),
        ("12e6", "12e6"),
        ("-1000m", "-1"),
        ("+2", "2"),
        ("0", "0"),
        ("0Mi", "0"),
        ("0.0000000001", "1n"),  # below nano: rounded up
        (".5", "500m"),
    ],
)
def test_canonical_form(given: str | float, canonical: str) -> None:
    assert canonical_quantity(given) == canonical


@pytest.mark.parametrize("bad", ["lots", "1.2.3", "1Mb", "", " 1", "1 ", "--1", "1e"])
def test_malformed_quantities_are_refused(bad: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


def test_format_error_is_apimachinerys_text() -> None:
    with pytest.raises(QuantityError, match=r"^quantities must match the regular expression"):
        parse_quantity("lots")
    assert QUANTITY_FORMAT_ERROR.endswith("'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_round_up_to_milli_as_resource_lists_are() -> None:
    assert parse_quantity("0.0001").round_up(-3).canonical() == "1m"
    assert parse_quantity("1.0001").round_up(-3).canonical() == "1001m"
    assert parse_quantity("-0.0001").round_up(-3).canonical() == "-1m"
    assert parse_quantity("250m").round_up(-3).canonical() == "250m"
