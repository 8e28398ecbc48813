"""cel-python is imported on the first CEL rule, not with pyop.schema: schemas without rules never load it."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_rules_load_the_engine_only_when_a_schema_has_one() -> None:
    printed = _run(
        """
        import sys
        from pyop.schema import validate

        plain = {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}}
        print(validate({"replicas": -1}, plain, rules=True) != [], "celpy" in sys.modules)
        ruled = dict(plain, **{"x-kubernetes-validations": [{"rule": "self.replicas < 3", "message": "too many"}]})
        errors = validate({"replicas": 5}, ruled)
        print([error.detail for error in errors], "celpy" in sys.modules)
        """
    )
    assert printed.splitlines() == ["True False", "['too many'] True"]
