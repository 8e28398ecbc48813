"""The marker scanner is total: every text ends in a value or a file:line MarkerError, quickly, and the grammar's
round trips hold. Property tests (hypothesis), sized for CI; bench/fuzz_markers.py runs the large fuzz."""

from __future__ import annotations

import contextlib
import io
import json
import math
import signal
import textwrap
import tokenize
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyop_scaffold.errors import PyopError
from pyop_scaffold.manifests.errors import MarkerError, SourceLocation
from pyop_scaffold.manifests.markers import parser
from pyop_scaffold.manifests.markers.comments import read_source_docs
from pyop_scaffold.manifests.markers.parser import parse_marker
from pyop_scaffold.manifests.markers.registry import MARKERS
from pyop_scaffold.manifests.markers.values import MAX_DEPTH

HERE = SourceLocation("types.py", 12)
CI = settings(max_examples=150, deadline=1000, suppress_health_check=[HealthCheck.too_slow])

SAMPLE = {
    "int": "5",
    "number": "1.5",
    "bool": "true",
    "string": "abc",
    "string list": "{a,b}",
    "list": 'A;B;"c d"',
    "any": '{a: 1, b: [x, "y"]}',
    "JSON": '{"a": [1, 2]}',
}


def _seed(definition: Any) -> str:
    if definition.value is not None:
        return f"{definition.name}={SAMPLE[definition.value.value]}"
    if definition.args:
        return definition.name + ":" + ",".join(f"{arg.name}={SAMPLE[arg.type.value]}" for arg in definition.args)
    return definition.name


SEEDS = [_seed(d) for d in MARKERS]
GRAMMAR = list('{}[]()",;:=`\\ \t') + ["NaN", "1e999", "１２", "٣", "\x0c", "\u2028", "9" * 500, "{a: ", "a=1,"]


class _Hang(Exception):
    pass


@contextlib.contextmanager
def terminates(seconds: float = 2.0) -> Iterator[None]:
    """Fail instead of hanging: the old scanner looped forever (and grew without bound) on `Enum={a`."""

    def alarm(signum: int, frame: Any) -> None:
        raise _Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def answer(text: str) -> Any:
    """parse_marker's answer for `text`, asserting it is a value or a located MarkerError (never another exception,
    never a hang)."""
    parser._PARSED.clear()
    with terminates():
        try:
            marker = parse_marker(text, HERE)
        except PyopError as exc:
            assert isinstance(exc, MarkerError)
            assert str(exc).startswith("types.py:12: "), str(exc)
            assert "\n" not in str(exc)
            return exc
    if marker is not None:
        json.dumps(marker.value, allow_nan=False, default=str)  # JSON the API server can read: no NaN, no inf
    return marker


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        kind = draw(st.integers(0, 4))
        if kind == 0:
            text = text[:position] + draw(st.sampled_from(GRAMMAR)) + text[position:]
        elif kind == 1:
            text = text[:position] + text[position + draw(st.integers(1, 6)) :]
        elif kind == 2:
            depth = draw(st.sampled_from([3, MAX_DEPTH, MAX_DEPTH + 1, 1500]))
            opener = draw(st.sampled_from(["{", "[", "{a: "]))
            closer = "]" if opener == "[" else "}"
            text = text[:position] + opener * depth + "1" + closer * draw(st.integers(0, depth)) + text[position:]
        elif kind == 3:
            text = text[:position] + draw(st.text(max_size=8)) + text[position:]
        else:
            text = text[:position]
    return text


@CI
@given(mutated())
def test_every_mutated_marker_gets_a_value_or_a_located_error(text: str) -> None:
    answer(text)


@CI
@given(st.lists(st.sampled_from(GRAMMAR + list("abkuildervoEnmx01")), max_size=30).map("".join))
def test_every_value_text_gets_an_answer_for_every_argument_type(value: str) -> None:
    for name in (
        "kubebuilder:validation:Enum",
        "kubebuilder:default",
        "default",
        "kubebuilder:validation:Minimum",
        "kubebuilder:validation:MaxLength",
        "kubebuilder:rbac:groups",
        "kubebuilder:validation:XValidation:rule",
    ):
        answer(f"{name}={value}")


@pytest.mark.parametrize(
    "text",
    [
        "kubebuilder:validation:Enum={a",
        "kubebuilder:rbac:groups={a,verbs=get",
        'kubebuilder:validation:Pattern="^a',
        "kubebuilder:default={a: [1, 2}",
        "kubebuilder:default=[1, {a: 2]",
        'kubebuilder:default={a: "x}',
    ],
)
def test_unterminated_or_mismatched_brackets_and_quotes_are_errors(text: str) -> None:
    error = answer(text)
    assert isinstance(error, MarkerError) and ("unterminated" in str(error) or "expected ','" in str(error)), error


def test_a_stray_closing_bracket_is_part_of_a_bare_word() -> None:
    marker = answer("kubebuilder:resource:shortName={]a,b}")  # looped forever before
    assert not isinstance(marker, MarkerError) and marker.value["shortName"] == ["]a", "b"]


def test_known_crashes_are_located_errors() -> None:
    for text, message in [
        ("kubebuilder:default=" + "{a: " * 1000 + "1" + "}" * 1000, f"nests more than {MAX_DEPTH}"),
        ("default=" + "[" * 1000 + "]" * 1000, f"nests more than {MAX_DEPTH}"),
        ("kubebuilder:validation:Minimum=" + "9" * 5000, "too large"),
        ("kubebuilder:default=" + "9" * 5000, "too large"),
        ("kubebuilder:example={a: " + "9" * 5000 + "}", "too large"),
    ]:
        error = answer(text)
        assert isinstance(error, MarkerError) and message in str(error), error


def test_external_docs_url_that_urlsplit_refuses_is_a_usage_error() -> None:
    from pyop_scaffold.manifests.markers.registry import MarkerUsageError

    marker = answer('kubebuilder:externalDocs:url="https://exa[mple.com"')
    assert marker is not None and not isinstance(marker, MarkerError)
    assert marker.definition.apply is not None
    with pytest.raises(MarkerUsageError, match="is not an absolute URL"):
        marker.definition.apply({"type": "string"}, marker.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kubebuilder:validation:Minimum=NaN", "expected a number, found 'NaN'"),
        ("kubebuilder:validation:Maximum=1e999", "not a finite float64"),
        ("kubebuilder:validation:Maximum=-Infinity", "expected a number"),
        ("kubebuilder:default=1e999", "not a finite float64"),
        ("kubebuilder:default={a: 1e400}", "not a finite float64"),
        ("default=NaN", "NaN is not a number JSON allows"),
        ("default=[1, Infinity]", "Infinity is not a number JSON allows"),
        ("default=1e999", "not a finite float64"),
    ],
)
def test_numbers_are_finite(text: str, message: str) -> None:
    error = answer(text)
    assert isinstance(error, MarkerError) and message in str(error), error


@CI
@given(st.characters(categories=["Nd"]).filter(lambda c: not "0" <= c <= "9"), st.integers(0, 3))
def test_only_ascii_digits_are_numbers(digit: str, where: int) -> None:
    text = ["1" + digit, digit, digit + "0", "-" + digit][where]
    for name in ("kubebuilder:validation:MaxLength", "kubebuilder:validation:Minimum"):
        assert isinstance(answer(f"{name}={text}"), MarkerError)
    value = answer(f"kubebuilder:default={text}")  # relaxed JSON: a word that is not a number is a string
    assert value.value == text


@pytest.mark.parametrize(
    "text",
    [
        'kubebuilder:validation:XValidation:rule="self.size() > 1",rule="true"',
        "kubebuilder:rbac:groups=apps,verbs=get,groups=batch",
        "kubebuilder:printcolumn:name=A,type=string,JSONPath=.a,name=B",
    ],
)
def test_an_argument_given_twice_is_an_error(text: str) -> None:
    error = answer(text)
    assert isinstance(error, MarkerError) and "is given twice" in str(error)


@pytest.mark.parametrize(
    "text",
    ['default={"a": 1, "a": 2}', "kubebuilder:default={a: 1, a: 2}", 'kubebuilder:example={x: {"k": 1, k: 2}}'],
)
def test_a_map_key_written_twice_is_an_error(text: str) -> None:
    error = answer(text)
    assert isinstance(error, MarkerError) and "written twice in one map" in str(error)


# -- round trips --------------------------------------------------------------------------------------------------

FINITE = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | FINITE | st.text(max_size=8)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
WORDS = st.from_regex(r"[A-Za-z][A-Za-z0-9._/-]{0,8}", fullmatch=True).filter(
    lambda w: w not in ("true", "false", "null")
)


@CI
@given(JSON_VALUES)
def test_json_round_trips_through_default_and_kubebuilder_default(value: Any) -> None:
    text = json.dumps(value)
    for name in ("default", "kubebuilder:default", "kubebuilder:example"):
        marker = answer(f"{name}={text}")
        assert not isinstance(marker, MarkerError), marker
        assert marker.value == value
        assert json.dumps(marker.value) == text  # same types too: 1 stays 1, 1.0 stays 1.0


def _relaxed(value: Any) -> str:
    """`value` in controller-tools' relaxed syntax: bare keys and words, `{a, b}` lists inside maps."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_relaxed(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_relaxed(item) for item in value) + "]"
    if isinstance(value, str):
        return value
    return json.dumps(value)


RELAXED = st.recursive(
    st.integers(-1000, 1000) | st.booleans() | WORDS,
    lambda inner: st.lists(inner, min_size=1, max_size=4) | st.dictionaries(WORDS, inner, min_size=1, max_size=4),
    max_leaves=15,
)


@CI
@given(RELAXED)
def test_relaxed_json_round_trips(value: Any) -> None:
    marker = answer(f"kubebuilder:default={_relaxed(value)}")
    assert not isinstance(marker, MarkerError), marker
    assert marker.value == value


@CI
@given(st.lists(WORDS, min_size=1, max_size=6))
def test_string_lists_round_trip_in_both_spellings(words: list[str]) -> None:
    for text in ("{" + ",".join(words) + "}", ";".join(words)):
        marker = answer(f"kubebuilder:rbac:groups={text},verbs=get")
        assert not isinstance(marker, MarkerError), marker
        assert marker.value["groups"] == words


@CI
@given(st.text().filter(lambda s: not any("\ud800" <= c <= "\udfff" for c in s)))
def test_quoted_strings_round_trip(value: str) -> None:
    marker = answer(f"kubebuilder:validation:Pattern={json.dumps(value)}")
    assert not isinstance(marker, MarkerError), marker
    assert marker.value == value
    rule = answer(f"kubebuilder:validation:XValidation:rule={json.dumps(value)},message=m")
    assert not isinstance(rule, MarkerError) and rule.value["rule"] == value


@CI
@given(st.integers())
def test_integers_round_trip_within_int64(number: int) -> None:
    marker = answer(f"kubebuilder:validation:MaxLength={number}")
    if -(2**63) <= number < 2**63:
        assert not isinstance(marker, MarkerError) and marker.value == number
    else:
        assert isinstance(marker, MarkerError) and "out of range" in str(marker)


@CI
@given(FINITE)
def test_finite_floats_round_trip(number: float) -> None:
    marker = answer(f"kubebuilder:validation:Minimum={number!r}")
    assert not isinstance(marker, MarkerError), marker
    assert marker.value == number and math.isfinite(marker.value)


@pytest.mark.parametrize("opener", ["[", "{a: ", "{"])
def test_nesting_is_bounded_with_a_clear_error(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    at_limit = answer("kubebuilder:default=" + opener * MAX_DEPTH + "1" + closer * MAX_DEPTH)
    assert not isinstance(at_limit, MarkerError), at_limit
    deeper = answer("kubebuilder:default=" + opener * (MAX_DEPTH + 1) + "1" + closer * (MAX_DEPTH + 1))
    assert isinstance(deeper, MarkerError) and f"nests more than {MAX_DEPTH} lists or maps deep" in str(deeper)


# -- line numbers ---------------------------------------------------------------------------------------------------

BREAKERS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def _tokenizer_marker_lines(source: str) -> list[int]:
    """Lines of `# +` comments alone on their line, as Python's tokenizer numbers them (the oracle)."""
    lines: list[int] = []
    code_row = 0
    for token in tokenize.generate_tokens(io.StringIO(source, newline="").readline):
        if token.type == tokenize.COMMENT and token.start[0] != code_row and token.string[1:].lstrip().startswith("+"):
            lines.append(token.start[0])
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            code_row = token.end[0]
    return lines


@st.composite
def modules(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    lines = ['"""Types."""', "", "class Spec:"]
    for number in range(draw(st.integers(1, 5))):
        odd = draw(st.sampled_from(BREAKERS))
        if draw(st.booleans()):
            lines.append(f"    # f{number} is{odd} a field.")
        lines.append(f"    # +kubebuilder:validation:MaxLength={number + 1}")
        value = f' = "a{odd}b"' if draw(st.booleans()) else ""
        lines.append(f"    f{number}: str{value}")
        if draw(st.booleans()):
            lines.append(f'    """f{number}{odd} docs."""')
        if draw(st.booleans()):
            lines.append(
                f'    note{number}: str = """x{odd}{newline}    # +kubebuilder:validation:Minimum=1{newline}"""'
            )
    return newline.join(lines) + newline


@CI
@given(modules())
def test_marker_lines_are_the_tokenizers(source: str) -> None:
    docs = read_source_docs(source, "m.py", "m.py")
    assert [m.location.line for m in docs.all_markers] == _tokenizer_marker_lines(source)
    rows = python_rows(source)
    for (_, field), block in docs.fields.items():
        for marker in block.markers:
            assert rows[marker.location.line - 1].strip().startswith("# +")
            assert rows[marker.location.line].lstrip().startswith(field + ":")  # the field right below


def python_rows(source: str) -> list[str]:
    return [line for line in io.StringIO(source, newline="").readlines()]


def test_a_form_feed_in_a_comment_no_longer_moves_markers_to_the_next_field() -> None:
    source = textwrap.dedent(
        """\
        class Spec:
            # name is the name.\x0c It is short.
            # +kubebuilder:validation:MaxLength=5
            name: str
            # +kubebuilder:validation:Minimum=1
            size: int
        """
    )
    docs = read_source_docs(source, "m.py", "m.py")
    assert [m.value for m in docs.for_field("Spec", "name").markers] == [5]
    assert [m.value for m in docs.for_field("Spec", "size").markers] == [1]
    assert [m.location.line for m in docs.all_markers] == [3, 5]
    assert docs.for_field("Spec", "name").description == "name is the name.\x0c It is short."


def test_docstring_markers_keep_their_written_line_across_escapes_and_odd_characters() -> None:
    source = (
        "class Thing:\n"
        '    """Thing\\nis a thing.\u2028 Really.\n'  # an escaped newline and a U+2028: one written line
        "\n"
        "    +kubebuilder:resource:scope=Cluster\n"
        "    continued \\\n"
        "    here\n"
        "    +kubebuilder:printcolumn:name=A,type=string,JSONPath=.a\n"
        '    """\n'
        "\n"
        "class Raw:\n"
        '    r"""Raw \\n stays.\n'
        "    +kubebuilder:subresource:status\n"
        '    """\n'
    )
    docs = read_source_docs(source, "m.py", "m.py")
    thing = docs.for_class("Thing")
    assert [(m.name, m.location.line) for m in thing.markers] == [
        ("kubebuilder:resource", 4),
        ("kubebuilder:printcolumn", 7),
    ]
    assert thing.description.startswith("Thing\nis a thing.\u2028 Really.")
    assert [(m.name, m.location.line) for m in docs.for_class("Raw").markers] == [
        ("kubebuilder:subresource:status", 12)
    ]
