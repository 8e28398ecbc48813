"""The scaffolded conversion tests: random objects of every version round-trip through the hub (hypothesis, from
the generated CRD's schemas) and the test API server serves every version through the manager's /convert. The
property test fails for a conversion that forgets a field the sample does not set; the sample's test does not."""

from __future__ import annotations

from pathlib import Path

import pytest

CAPTAIN = ("--group", "crew", "--version", "v1", "--kind", "Captain")


def _ok(result) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == 0, result.stdout + result.stderr


@pytest.fixture
def project(tmp_path: Path, pyop) -> Path:  # type: ignore[no-untyped-def]
    root = tmp_path / "fleet"
    root.mkdir()
    _ok(pyop("init", "--domain", "example.com", cwd=root))
    for version in ("v1", "v2"):
        _ok(pyop("create", "api", "--group", "crew", "--version", version, "--kind", "Captain", cwd=root))
    _ok(pyop("create", "webhook", *CAPTAIN, "--conversion", "--spoke", "v2", cwd=root))
    _ok(pyop("make", "manifests", cwd=root))
    return root


def test_the_conversion_tests_pass_and_one_that_loses_a_field_fails(project: Path, project_pytest) -> None:  # type: ignore[no-untyped-def]
    tests = "tests/test_crew_captain_v1_webhook.py"
    result = project_pytest(project, tests, "-vv")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    for name in (
        "test_random_objects_of_every_version_round_trip_through_the_hub PASSED",
        "test_the_api_server_serves_every_version_through_the_conversion_webhook PASSED",
        "test_v2_round_trips_through_the_hub PASSED",
    ):
        assert name in result.stdout, result.stdout[-3000:]

    spoke = project / "fleet" / "api" / "v2" / "captain_types.py"
    text = spoke.read_text()
    anchor = '        data["apiVersion"] = HubCaptain.resource_info.api_version\n'
    assert anchor in text
    spoke.write_text(text.replace(anchor, anchor + '        data.pop("status", None)\n', 1))  # forgets status
    result = project_pytest(project, tests, "-vv")
    assert "test_random_objects_of_every_version_round_trip_through_the_hub FAILED" in result.stdout, result.stdout[
        -3000:
    ]
    assert "test_v2_round_trips_through_the_hub PASSED" in result.stdout  # the sample has no status: it cannot tell
