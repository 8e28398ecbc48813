"""CEL (``x-kubernetes-validations``) parsing and best-effort evaluation with ``cel-python``.

cel-python (``celpy``) implements standard CEL: field selection, ``has()``, the ``all``/
``exists``/``exists_one``/``map``/``filter`` macros, ``size``, ``matches`` (RE2),
``startsWith``/``endsWith``/``contains``, ``int()``/``string()``/``duration()``/
``timestamp()`` and ternaries. It lacks Kubernetes' additions: optional syntax (``.?``,
``[?]``), cross-type numeric comparison (``1 == 1.0``), the strings/lists/sets extension
libraries, ``quantity()``, ``url()``, ``ip()``/``cidr()``, ``format.*``, ``semver()`` and
two-variable comprehensions.

So evaluation is deliberately one-sided: a rule that celpy cannot evaluate (unknown function,
no matching overload, unsupported syntax) is *skipped*, never reported. Only a definite
``false`` or a missing-field/division error (which the API server reports too) becomes an
error. A rule using ``oldSelf`` is evaluated only on update, where the old value correlates.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any, Final

from pyop.schema import fieldpath
from pyop.schema.errors import FieldError, duplicate, forbidden, invalid, required
from pyop.schema.values import ABSENT

_log = logging.getLogger(__name__)

MAX_MESSAGE_EXPRESSION_BYTES: Final = 5 * 1024
_IDENT_OLD_SELF: Final = re.compile(r"(?<![A-Za-z0-9_.])oldSelf\b")
_METADATA_FIELDS_IN_CEL: Final = ("name", "generateName")

# cel-python and what it imports (lark, pendulum) take about a tenth of a second to import, which schemas
# without rules, and every process that never checks one, need not pay: loaded on the first rule.
_celpy: Any = None
_ct: Any = None
_CELParseError: Any = Exception
_load_tried = False


def _engine_loaded() -> bool:
    """Import cel-python on first use; False when it is not installed."""
    global _celpy, _ct, _CELParseError, _load_tried
    if _load_tried:
        return _celpy is not None
    _load_tried = True
    try:  # cel-python is a declared dependency; degrade to "no CEL" rather than crash without it.
        import celpy
        from celpy import celtypes
        from celpy.celparser import CELParseError
    except ImportError:  # pragma: no cover - exercised only in stripped-down installs
        return False
    logging.getLogger("celpy.Transpiler").addFilter(_drop_transpiler_internal_errors)
    _celpy, _ct, _CELParseError = celpy, celtypes, CELParseError
    return True


def _drop_transpiler_internal_errors(record: logging.LogRecord) -> bool:
    # CompiledRunner logs every evaluation error (a missing key, say) at ERROR level before
    # raising it; for CEL that is ordinary control flow, reported to the client as a field error.
    return not str(record.msg).startswith("Internal error")


def available() -> bool:
    """Whether CEL rules can be parsed and evaluated in this installation (loads cel-python)."""
    return _engine_loaded()


def code_outside_strings(expression: str) -> str:
    """``expression`` with every string/bytes literal blanked, so token searches ignore text."""
    result: list[str] = []
    cursor = 0
    length = len(expression)
    while cursor < length:
        char = expression[cursor]
        if char in "'\"":
            quote = expression[cursor : cursor + 3] if expression[cursor : cursor + 3] in ("'''", '"""') else char
            raw = cursor > 0 and expression[cursor - 1] in "rR"
            end = cursor + len(quote)
            while end < length and expression[end : end + len(quote)] != quote:
                end += 2 if (expression[end] == "\\" and not raw) else 1
            end = min(end + len(quote), length)
            result.append(quote + " " * max(0, end - cursor - 2 * len(quote)) + quote)
            cursor = end
        else:
            result.append(char)
            cursor += 1
    return "".join(result)


def uses_old_self(expression: str) -> bool:
    """Whether the rule is a transition rule (references ``oldSelf`` outside string literals)."""
    return bool(_IDENT_OLD_SELF.search(code_outside_strings(expression)))


def _without_optional_syntax(expression: str) -> str:
    """Rewrite ``x.?f`` / ``x[?k]`` to ``x.f`` / ``x[k]``: same shape, parseable by celpy."""
    code = code_outside_strings(expression)
    chars = list(expression)
    for position in range(len(code) - 1):
        if code[position] in ".[" and code[position + 1] == "?":
            chars[position + 1] = " "
    return "".join(chars)


@lru_cache(maxsize=2048)
def parse_error(expression: str) -> str | None:
    """The parser's message if ``expression`` is not valid CEL syntax, else None.

    Kubernetes' optional syntax is accepted by rewriting it before parsing (celpy's grammar
    does not know it). None is also returned when celpy is unavailable.
    """
    if not _engine_loaded():
        return None
    try:
        _celpy.Environment().compile(_without_optional_syntax(expression))
    except _CELParseError as error:
        return str(error).strip()
    except Exception as error:  # noqa: BLE001 - celpy raises assorted errors for odd input
        return str(error).strip() or type(error).__name__
    return None


@lru_cache(maxsize=2048)
def parse_tree(expression: str) -> Any:
    """celpy's Lark tree of ``expression`` (optional syntax rewritten), or None."""
    if not _engine_loaded():
        return None
    try:
        return _celpy.Environment().compile(_without_optional_syntax(expression))
    except Exception:  # noqa: BLE001
        return None


@lru_cache(maxsize=2048)
def _program(expression: str) -> Any:
    """A runnable program, built once per rule text.

    celpy's CompiledRunner (transpiled to Python) evaluates about four times faster than the
    tree interpreter, which matters because the test API server runs rules on every write.
    """
    if not _engine_loaded():
        return None
    for runner in (getattr(_celpy, "CompiledRunner", None), _celpy.InterpretedRunner):
        if runner is None:
            continue
        try:
            environment = _celpy.Environment(runner_class=runner)
            return environment.program(environment.compile(expression))
        except Exception:  # noqa: BLE001, S112 - includes unsupported optional syntax; try the next runner
            continue
    return None


def to_cel(value: Any, schema: Any, resource_root: bool = False) -> Any:
    """Typed CEL value as Kubernetes builds it: ``number`` is double, ``byte`` strings are bytes,
    and a resource root only exposes apiVersion, kind, metadata.name/generateName."""
    if _ct is None and not _engine_loaded():
        raise RuntimeError("CEL values need cel-python, which is not installed")
    node = schema if isinstance(schema, dict) else {}
    if value is None:
        return None
    if isinstance(value, bool):
        return _ct.BoolType(value)
    if isinstance(value, int):
        return _ct.DoubleType(value) if node.get("type") == "number" else _ct.IntType(value)
    if isinstance(value, float):
        if node.get("type") == "integer" and value.is_integer():
            return _ct.IntType(int(value))
        return _ct.DoubleType(value)
    if isinstance(value, str):
        return _string_to_cel(value, node)
    if isinstance(value, list):
        items = node.get("items")
        return _ct.ListType([to_cel(item, items) for item in value])
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        additional = node.get("additionalProperties")
        embedded = resource_root or bool(node.get("x-kubernetes-embedded-resource"))
        converted: dict[Any, Any] = {}
        for name, item in value.items():
            if embedded and name == "metadata" and isinstance(item, dict):
                item = {k: v for k, v in item.items() if k in _METADATA_FIELDS_IN_CEL}
            item_schema = properties.get(name, additional if isinstance(additional, dict) else None)
            converted[_ct.StringType(name)] = to_cel(item, item_schema)
        return _ct.MapType(converted)
    return value


def _string_to_cel(value: str, node: dict[str, Any]) -> Any:
    assert _ct is not None
    format_name = (node.get("format") or "").replace("-", "")
    try:
        if format_name == "byte":
            import base64

            return _ct.BytesType(base64.b64decode(value))
        if format_name == "duration":
            return _ct.DurationType(value)
        if format_name in ("date", "datetime"):
            return _ct.TimestampType(value if format_name == "datetime" else value + "T00:00:00Z")
    except Exception:  # noqa: BLE001 - fall back to a plain string, as invalid formats already error
        pass
    return _ct.StringType(value)


class _Unevaluable(Exception):
    """celpy cannot evaluate this rule faithfully; the rule is skipped."""


def _evaluate(expression: str, activation: dict[str, Any]) -> Any:
    program = _program(expression)
    if program is None:
        raise _Unevaluable(expression)
    try:
        result = program.evaluate(activation)
    except _celpy.CELEvalError as error:  # type: ignore[union-attr]
        return error
    except Exception as error:  # noqa: BLE001 - celpy internals (e.g. 2-variable macros)
        raise _Unevaluable(str(error)) from error
    return result


def _runtime_error_detail(expression: str, error: Any) -> str | None:
    """Detail for evaluation errors the API server reports too; None for engine gaps.

    celpy raises KeyError both for a missing field (reported by Kubernetes as "no such key")
    and for a function it does not implement ("undeclared reference"); only the first counts.
    """
    arguments: tuple[Any, ...] = tuple(getattr(error, "args", ()))
    if len(arguments) > 2 and arguments[1] is _celpy.CELEvalError and isinstance(arguments[2], tuple):
        arguments = arguments[2]  # CompiledRunner wraps the real error: ("evaluation error", CELEvalError, args)
    message = str(arguments[0]) if arguments else str(error)
    cause = arguments[1] if len(arguments) > 1 else None
    if "no such member in mapping" in message or message == "no such key":
        names = arguments[2] if len(arguments) > 2 and arguments[2] else ()
        quoted = re.search(r"'([^']*)'", message)
        missing = str(names[0]) if names else (quoted.group(1) if quoted else "?")
        return f"{expression}: no such key: {missing}"
    if cause is ZeroDivisionError:
        return f"{expression}: division by zero"
    return None


def _message(rule: dict[str, Any], activation: dict[str, Any]) -> str:
    message_expression = (rule.get("messageExpression") or "").strip()
    if message_expression:
        try:
            rendered = _evaluate(message_expression, activation)
        except _Unevaluable:
            rendered = None
        if (
            isinstance(rendered, str)  # celpy may hand back a plain str rather than StringType
            and rendered.strip()
            and "\n" not in rendered
            and "\r" not in rendered
            and len(rendered.encode()) <= MAX_MESSAGE_EXPRESSION_BYTES
        ):
            return str(rendered)
    message = (rule.get("message") or "").strip()
    return message or f"failed rule: {(rule.get('rule') or '').strip()}"


def _error_for_reason(path: str, schema_type: str, detail: str, reason: str | None) -> FieldError:
    if reason == "FieldValueRequired":
        return required(path, detail)
    if reason == "FieldValueForbidden":
        return forbidden(path, detail)
    if reason == "FieldValueDuplicate":
        return duplicate(path, schema_type)
    return invalid(path, schema_type, detail)


def _error_path(path: str, rule: dict[str, Any], schema: dict[str, Any]) -> str:
    field_path = (rule.get("fieldPath") or "").strip()
    if not field_path:
        return path
    try:
        return fieldpath.render(path, fieldpath.parse(field_path), schema)
    except fieldpath.FieldPathError:
        return path


def evaluate_rules(value: Any, schema: dict[str, Any], path: str, old: Any, resource_root: bool) -> list[FieldError]:
    """Errors from the ``x-kubernetes-validations`` of one schema node for ``value``."""
    if not _engine_loaded():
        return []
    errors: list[FieldError] = []
    schema_type = schema.get("type") or ""
    self_value: Any = ABSENT
    old_value: Any = ABSENT  # both converted once per node, not once per rule
    for rule in schema.get("x-kubernetes-validations") or ():
        expression = (rule.get("rule") or "").strip()
        if not expression:
            continue
        transition = uses_old_self(expression)
        if transition and old is ABSENT:
            continue  # create, or uncorrelatable position: the API server skips these too
        if self_value is ABSENT:
            self_value = to_cel(value, schema, resource_root)
        activation = {"self": self_value}
        if transition:
            if old_value is ABSENT:
                old_value = to_cel(old, schema, resource_root)
            activation["oldSelf"] = old_value
        try:
            result = _evaluate(expression, activation)
        except _Unevaluable:
            _log.debug("CEL rule skipped (not evaluable by celpy): %s", expression)
            continue
        if isinstance(result, _celpy.CELEvalError):
            detail = _runtime_error_detail(expression, result)
            if detail is None:
                _log.debug("CEL rule skipped (%s): %s", result, expression)
            else:
                errors.append(invalid(path, schema_type, detail))
            continue
        if not isinstance(result, _ct.BoolType):  # type: ignore[union-attr]
            continue
        if not result:
            detail = _message(rule, activation)
            errors.append(_error_for_reason(_error_path(path, rule, schema), schema_type, detail, rule.get("reason")))
    return errors
