"""Fuzz the marker scanner and the comment reader; time the scanner on long markers. Old and new, interleaved.

    python bench/fuzz_markers.py [--inputs 100000] [--modules 300] [--pipeline 1000] [--seed 1] [--old-commit 3e8de10]
                                 [--no-old]

1. Markers: `--inputs` mutations (insertions of grammar characters, deletions, repeats, deep nesting, huge numbers,
   NaN, non-ASCII digits, truncation, ...) of the documented markers (docs/reference/*.md and every registry entry
   with a sample value per argument type). Each input goes to the old parser (from git, `--old-commit`) and to the
   new one, in alternating order, under a 0.25 s alarm. Counted per parser: values, errors (PyopError, with
   file:line), uncaught exceptions by type, timeouts (a hang: the old `Enum={a` loop), values that are not JSON
   (NaN/Infinity reach the CRD as `.nan`), and the longest time one input took.
2. Comment lines: `--modules` generated modules whose comments and strings carry a form feed, NEL, U+2028 or
   another character `str.splitlines` breaks at; the marker lines each reader reports are compared with the lines
   Python's tokenizer gives the same comments.
3. Linear time: microseconds per KB of marker text at 1, 10 and 100 KB for several shapes.
4. End to end: `--pipeline` mutated markers written on a field, a model class or the kind class of a small
   project and run through `make manifests` in-process (the old commit's code from `git archive`), in chunks of
   50 that alternate between old and new. Counted: CRDs generated, refusals whose every line has a file:line,
   refusals with lines that do not (the acceptance check's, before), uncaught exceptions, timeouts (> 5 s).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.util
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyop_scaffold.errors import PyopError
from pyop_scaffold.manifests.errors import SourceLocation
from pyop_scaffold.manifests.markers import comments as new_comments
from pyop_scaffold.manifests.markers import parser as new_parser
from pyop_scaffold.manifests.markers.registry import MARKERS

REPO = Path(__file__).resolve().parent.parent

TIMEOUT = 0.25
HERE = SourceLocation("fuzz.py", 1)

SAMPLES = {
    "<int>": "5",
    "<number>": "1.5",
    "<bool>": "true",
    "<string>": "abc",
    "<string list>": "{a,b}",
    "<list>": 'A;B;"c d"',
    "<any>": '{a: 1, b: [x, "y"]}',
    "<JSON>": '{"a": [1, 2]}',
}
EXTRA_SEEDS = [
    'kubebuilder:validation:XValidation:rule="self.size() > 1",message="too short",reason=FieldValueInvalid',
    'kubebuilder:printcolumn:name="Crew",type=integer,JSONPath=`.spec.crew`,priority=1',
    "kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch",
    "kubebuilder:rbac:groups={apps,batch},resources={jobs},verbs={get,list}",
    "kubebuilder:resource:scope=Cluster,shortName=cap;ca,categories={all,fleet}",
    'kubebuilder:default={policy: delete, retries: 3, nested: {list: [1, 2.5, "x"], empty: {}}}',
    'default={"policy": "delete", "limits": [1, 2, 3]}',
    "kubebuilder:validation:Enum=Allow;Forbid;Replace",
    "kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`",
    'kubebuilder:externalDocs:url=https://example.com/docs,description="The docs"',
    "kubebuilder:validation:items:MaxLength=63",
    "kubebuilder:webhook:path=/mutate-v1-ship,mutating=true,failurePolicy=fail,sideEffects=None,"
    "groups=fleet.example.com,resources=ships,verbs=create;update,versions=v1,name=mship.kb.io,"
    "admissionReviewVersions=v1",
]
INSERTS = list('{}[]()",;:=`\\ ') + [
    "{",
    "[",
    '"',
    "`",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e999",
    "１２",
    "٣٤",
    "\x0c",
    "\x85",
    "\u2028",
    "\t",
    "\\u",
    "\\ud800",
    "a,a=1",
    "rule=true",
    "{a: 1, a: 2}",
    '{"k": 1, "k": 2}',
    "0x10",
    "1_000",
    "+5",
    "-0",
    ".5",
]


def seeds() -> list[str]:
    found: list[str] = []
    for doc in sorted((REPO / "docs").rglob("*.md")):
        text = doc.read_text(encoding="utf-8")
        found += [m.group(1) for m in re.finditer(r"`\+([A-Za-z][^`\n]*)`", text)]
        found += [m.group(1) for m in re.finditer(r"^\s*# \+([A-Za-z]\S*)", text, re.MULTILINE)]
    for definition in MARKERS:
        if definition.value is not None:
            found.append(f"{definition.name}={SAMPLES['<' + definition.value.value + '>']}")
        elif definition.args:
            found.append(
                definition.name
                + ":"
                + ",".join(f"{a.name}={SAMPLES['<' + a.type.value + '>']}" for a in definition.args)
            )
        else:
            found.append(definition.name)
    for placeholder, sample in SAMPLES.items():
        found = [text.replace(placeholder + "?", sample).replace(placeholder, sample) for text in found]
    return sorted(set(found + EXTRA_SEEDS))


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(10)
        pos = rng.randint(0, len(text))
        if choice <= 2:
            text = text[:pos] + rng.choice(INSERTS) + text[pos:]
        elif choice == 3 and text:
            end = min(len(text), pos + rng.randint(1, 8))
            text = text[:pos] + text[end:]
        elif choice == 4:
            cut = text.find("=")
            if cut >= 0:  # repeat an argument or a value
                piece = text[cut + 1 :].split(",", 1)[0]
                name = re.findall(r"[,:](\w+)=", text)
                extra = f",{rng.choice(name)}={piece}" if name and rng.random() < 0.5 else f";{piece}"
                text = text + extra
        elif choice == 5:
            depth = rng.choice([2, 10, 100, 1000, 3000])
            opener = rng.choice(["{", "[", "{a: "])
            closer = {"{": "}", "[": "]", "{a: ": "}"}[opener]
            balanced = rng.random() < 0.7
            text = text[:pos] + opener * depth + "1" + (closer * depth if balanced else "") + text[pos:]
        elif choice == 6:
            digits = re.search(r"[0-9]+", text)
            big = rng.choice(["9" * 20, "9" * 400, "9" * 5000, "1e999", "NaN", "-Infinity", "１２", "٣"])
            text = text[: digits.start()] + big + text[digits.end() :] if digits else text + "=" + big
        elif choice == 7:
            text = text[:pos]
        elif choice == 8 and text:
            text = text[:pos] + text[pos : pos + 10] * rng.randint(2, 5) + text[pos:]
        else:
            text = text[:pos] + chr(rng.randint(32, 0x3000)) + text[pos + 1 :]
    return text


# -- the old parser, from git ---------------------------------------------------------------------------------------


def load_old(commit: str) -> types.ModuleType:
    """The markers package as it was at `commit`, importable as `old_markers` (its own registry, values, parser,
    comments)."""
    folder = Path(tempfile.mkdtemp(prefix="old-markers-")) / "old_markers"
    folder.mkdir()
    for name in ("__init__", "registry", "values", "parser", "comments"):
        source = subprocess.run(
            ["git", "show", f"{commit}:scaffold/manifests/markers/{name}.py"],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (folder / f"{name}.py").write_text(source.replace("pyop_scaffold.manifests.markers.", "old_markers."))
    sys.path.insert(0, str(folder.parent))
    importlib.invalidate_caches()
    for name in ("old_markers", "old_markers.parser", "old_markers.comments"):
        importlib.import_module(name)
    return sys.modules["old_markers"]


# -- running one input ----------------------------------------------------------------------------------------------


class _Timeout(BaseException):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Timeout


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False, default=str)
    except (ValueError, TypeError, RecursionError):
        return False
    return True


class Tally:
    def __init__(self, name: str) -> None:
        self.name = name
        self.counts: Counter[str] = Counter()
        self.exceptions: Counter[str] = Counter()
        self.examples: dict[str, str] = {}
        self.max_time = 0.0
        self.total_time = 0.0

    def run(self, parse: Callable[[str, SourceLocation], Any], text: str) -> tuple[str, str]:
        """(outcome, error message or "")."""
        message = ""
        started = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
        try:
            marker = parse(text, HERE)
            outcome = "value" if marker is None or _json_safe(marker.value) else "non-JSON value"
        except PyopError as exc:
            message = str(exc)
            outcome = "error (file:line)" if message.startswith("fuzz.py:1: ") else "error without file:line"
        except _Timeout:
            outcome = f"timeout (> {TIMEOUT} s)"
        except BaseException as exc:  # noqa: BLE001 - counting what escapes is the point
            outcome = "uncaught exception"
            self.exceptions[type(exc).__name__] += 1
            self.examples.setdefault(type(exc).__name__, text[:100])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.perf_counter() - started
        self.counts[outcome] += 1
        if outcome in ("non-JSON value", f"timeout (> {TIMEOUT} s)"):
            self.examples.setdefault(outcome, text[:100])
        self.max_time = max(self.max_time, elapsed)
        self.total_time += elapsed
        return outcome, message

    def report(self, inputs: int) -> None:
        print(f"  {self.name}: {inputs} inputs")
        for outcome in ("value", "error (file:line)", "error without file:line", "uncaught exception"):
            print(f"    {outcome:28} {self.counts[outcome]:7}")
        for outcome in sorted(set(self.counts) - {"value", "error (file:line)", "error without file:line"}):
            if outcome != "uncaught exception":
                print(f"    {outcome:28} {self.counts[outcome]:7}")
        for name, count in self.exceptions.most_common():
            print(f"      {name}: {count}   e.g. {self.examples[name]!r}")
        for outcome in ("non-JSON value", f"timeout (> {TIMEOUT} s)"):
            if outcome in self.examples:
                print(f"      {outcome} e.g. {self.examples[outcome]!r}")
        mean = self.total_time / inputs * 1e6
        print(f"    max time per input        {self.max_time * 1000:7.1f} ms (mean {mean:.0f} µs)")


def fuzz_markers(args: argparse.Namespace, old: types.ModuleType | None) -> None:
    rng = random.Random(args.seed)
    pool = seeds()
    print(f"1. markers: {len(pool)} documented seeds, {args.inputs} mutated inputs")
    parsers: list[tuple[Tally, Callable[[str, SourceLocation], Any]]] = [(Tally("new"), new_parser.parse_marker)]
    if old is not None:
        parsers.append((Tally(f"old ({args.old_commit})"), old.parser.parse_marker))
    signal.signal(signal.SIGALRM, _alarm)
    refused_now: Counter[str] = Counter()  # the old parser gave a value, the new one an error: why
    examples: dict[str, str] = {}
    for index in range(args.inputs):
        text = mutate(rng, rng.choice(pool))
        order = parsers if index % 2 == 0 else parsers[::-1]
        results = {id(tally): tally.run(parse, text) for tally, parse in order}
        if old is not None:
            (new_outcome, message), (old_outcome, _) = (results[id(tally)] for tally, _ in parsers)
            if old_outcome in ("value", "non-JSON value") and new_outcome.startswith("error"):
                reason = _reason(text, message)
                refused_now[reason] += 1
                examples.setdefault(reason, text[:90])
    for tally, _ in parsers:
        tally.report(args.inputs)
    if old is not None:
        print(f"  accepted by the old parser, refused by the new one: {sum(refused_now.values())}")
        for reason, count in refused_now.most_common():
            print(f"    {reason:46} {count:6}   e.g. {examples[reason]!r}")


_REASONS = (
    ("argument given twice", "is given twice"),
    ("key written twice in a map", "written twice in one map"),
    ("number not finite (NaN, 1e999, huge)", "finite|too large|not a number JSON allows|out of range"),
    ("nesting deeper than the limit", "nests more than"),
    ("unterminated bracket or quote", "unterminated"),
    ("list and map items mixed", "mixes 'key: value'"),
    ("empty item in a list or map", "empty item"),
    ("lone surrogate", "surrogate"),
    ("text after the value / missing separator", "unexpected text|expected ',' or"),
)


def _reason(text: str, message: str) -> str:
    if re.search(r"expected an integer|expected a number", message) and re.search(r"[^\x00-\x7f]", text):
        return "non-ASCII digits or text where a number goes"
    if re.search(r"expected an integer|expected a number", message):
        return "malformed number (1_000, 0x10, ...)"
    for reason, pattern in _REASONS:
        if re.search(pattern, message):
            return reason
    return "other: " + " ".join(message.split(": ", 2)[-1].split()[:6])


# -- comment lines ----------------------------------------------------------------------------------------------------

BREAKERS = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def module_source(rng: random.Random) -> str:
    """A module whose comments and strings hold characters str.splitlines breaks at, with markers on fields."""
    lines = ['"""Types."""', "", "class Spec:"]
    for number in range(rng.randint(3, 8)):
        breaker = rng.choice(BREAKERS)
        lines.append(f"    # field{number} is a field{breaker if rng.random() < 0.5 else ''}.")
        lines.append(f"    # +kubebuilder:validation:MaxLength={number + 1}")
        if rng.random() < 0.4:
            lines.append(f'    f{number}: str = "x{breaker}y"')
        else:
            lines.append(f"    f{number}: str")
        if rng.random() < 0.3:
            lines.append(f'    """Docs of f{number}{breaker} continued."""')
    lines.append("# +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get")
    return "\n".join(lines) + "\n"


def tokenizer_marker_lines(source: str) -> list[int]:
    """Lines of the `# +` comments that stand alone on their line, as Python's tokenizer numbers them."""
    found = []
    previous_row = 0
    for token in tokenize.generate_tokens(io.StringIO(source, newline="").readline):
        if (
            token.type == tokenize.COMMENT
            and token.start[0] != previous_row
            and token.string[1:].strip().startswith("+")
        ):
            found.append(token.start[0])
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous_row = token.end[0]
    return found


def fuzz_comment_lines(args: argparse.Namespace, old: types.ModuleType | None) -> None:
    rng = random.Random(args.seed)
    readers: list[tuple[str, Any]] = [("new", new_comments)]
    if old is not None:
        readers.append((f"old ({args.old_commit})", old.comments))
    wrong = Counter[str]()
    failed = Counter[str]()
    for _ in range(args.modules):
        source = module_source(rng)
        ast.parse(source)
        expected = tokenizer_marker_lines(source)
        for name, reader in readers:
            try:
                docs = reader.read_source_docs(source, "m.py", "m.py")
            except Exception:  # noqa: BLE001
                failed[name] += 1
                continue
            if sorted(m.location.line for m in docs.all_markers) != expected:
                wrong[name] += 1
    print(f"2. comment lines: {args.modules} modules with form feeds, NELs, U+2028 ... in comments and strings")
    for name, _ in readers:
        print(f"  {name}: marker lines differ from the tokenizer's in {wrong[name]} modules, {failed[name]} refused")


# -- linear time -----------------------------------------------------------------------------------------------------


def shapes(size: int) -> dict[str, str]:
    def repeat(unit: Callable[[int], str], joiner: str) -> str:
        parts: list[str] = []
        total = 0
        index = 0
        while total < size:
            part = unit(index)
            parts.append(part)
            total += len(part) + len(joiner)
            index += 1
        return joiner.join(parts)

    nested = "{a: {b: {c: {d: {e: [1, 2, {f: x}]}}}}}"
    return {
        "relaxed default {kN: {...}}": "kubebuilder:default={"
        + repeat(lambda i: f'k{i}: {{a: 1, b: [x, "y"]}}', ", ")
        + "}",
        "nested default, 6 deep": "kubebuilder:default={" + repeat(lambda i: f"k{i}: {nested}", ", ") + "}",
        "strict JSON +default": 'default={"items": [' + repeat(lambda i: f'{{"k": {i}, "v": "x"}}', ", ") + "]}",
        "Enum a;b;c": "kubebuilder:validation:Enum=" + repeat(lambda i: f"v{i}", ";"),
        "rbac verbs={a,b,...}": "kubebuilder:rbac:groups=apps,resources=x,verbs={"
        + repeat(lambda i: f"v{i}", ",")
        + "}",
        "quoted XValidation rule": 'kubebuilder:validation:XValidation:rule="'
        + repeat(lambda i: f"self.a{i} > 0", " && ")
        + '"',
    }


def time_per_kb(parse: Callable[[str, SourceLocation], Any], text: str, cache: dict[str, Any]) -> float:
    """Best of several runs, µs per KB; the parse cache is emptied before each run (a fresh text each time)."""
    best = float("inf")
    for _ in range(9 if len(text) < 50_000 else 5):
        cache.clear()
        started = time.perf_counter()
        with contextlib.suppress(PyopError):
            parse(text, HERE)
        best = min(best, time.perf_counter() - started)
    return best * 1e6 / (len(text) / 1024)


def linear_time(old: types.ModuleType | None) -> None:
    print("3. parse time, µs per KB of marker text (1 KB / 10 KB / 100 KB; flat = linear)")
    parsers: list[tuple[str, Callable[[str, SourceLocation], Any], dict[str, Any]]] = [
        ("new", new_parser.parse_marker, new_parser._PARSED)
    ]
    if old is not None:
        parsers.append(("old", old.parser.parse_marker, old.parser._PARSED))
    sizes = (1024, 10 * 1024, 100 * 1024)
    texts = {size: shapes(size) for size in sizes}
    for shape in texts[sizes[0]]:
        cells: dict[str, list[str]] = {name: [] for name, _, _ in parsers}
        for size in sizes:
            for name, parse, cache in parsers:  # interleaved: new and old on the same text, one after the other
                cells[name].append(f"{time_per_kb(parse, texts[size][shape], cache):8.1f}")
        row = "   ".join(f"{name} {' '.join(values)}" for name, values in cells.items())
        print(f"  {shape:28} {row}")


# -- make manifests end to end ------------------------------------------------------------------------------------

PIPELINE_TYPES = """from __future__ import annotations

from pyop.api import KubeModel, Resource

from .groupversion_info import GROUP_VERSION


{type_markers}
class ShipSpec(KubeModel):
    # name is the ship's name.
    name: str = "a"
    crew: int = 1
    tags: list[str] = []
{field_markers}
    free: str | None = None


# +kubebuilder:object:root=true
{kind_markers}
class Ship(Resource, group_version=GROUP_VERSION):
    spec: ShipSpec
"""
LOCATED = re.compile(r"^(Error: )?[\w./-]+\.py:\d+: ")


def pipeline_inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(slot, marker) pairs: mutated markers written where their kind of marker goes (field, type or kind)."""
    rng = random.Random(args.seed + 1)
    pool = seeds()
    inputs = []
    for _ in range(args.pipeline):
        text = mutate(rng, rng.choice(pool))
        inputs.append((rng.choice(["field", "type", "kind"]), text))
    return inputs


def _write_project(root: Path) -> None:
    (root / "PROJECT").write_text(
        "domain: example.com\nlayout:\n- python.pyop.io/v1\npackage: fuzz_op\nprojectName: fuzz-op\nversion: '3'\n"
    )
    version = root / "fuzz_op" / "api" / "v1"
    version.mkdir(parents=True)
    (root / "fuzz_op" / "__init__.py").write_text("")
    (root / "fuzz_op" / "api" / "__init__.py").write_text('"""APIs."""\n')
    (version / "__init__.py").write_text('"""The v1 API."""\n')
    (version / "groupversion_info.py").write_text(
        '"""Group and version.\n\n+groupName=fleet.example.com\n"""\n\nfrom pyop.api import GroupVersion\n\n'
        'GROUP_VERSION = GroupVersion(group="fleet.example.com", version="v1")\n'
    )


def pipeline_worker(inputs_file: str) -> None:
    """Run `make manifests` in-process on each input; print one JSON object of counts (run in a subprocess whose
    PYTHONPATH chooses the code: this checkout or the old commit's)."""
    from pyop_scaffold.commands.make_manifests import ManifestOptions, make_manifests

    inputs = json.loads(Path(inputs_file).read_text())
    counts: Counter[str] = Counter()
    unlocated: Counter[str] = Counter()
    examples: dict[str, str] = {}
    max_time = 0.0
    signal.signal(signal.SIGALRM, _alarm)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        _write_project(root)
        types_file = root / "fuzz_op" / "api" / "v1" / "ship_types.py"
        for slot, text in inputs:
            line = "# +" + text.replace("\n", " ").replace("\r", " ")
            types_file.write_text(
                PIPELINE_TYPES.format(
                    type_markers=line if slot == "type" else "",
                    field_markers=("    " + line) if slot == "field" else "",
                    kind_markers=line if slot == "kind" else "",
                )
            )
            started = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, 5.0)
            try:
                make_manifests(root, ManifestOptions())
                counts["generated"] += 1
            except PyopError as exc:
                lines = str(exc).split("\n")  # the CLI prints one problem a line
                bad = [item for item in lines if not LOCATED.match(item)]
                counts["refused, every line with file:line" if not bad else "refused, lines without file:line"] += 1
                counts["error lines"] += len(lines)
                counts["error lines without file:line"] += len(bad)
                for item in bad:
                    key = re.sub(r"\d+", "N", item)[:70]
                    unlocated[key] += 1
                    examples.setdefault(key, text[:80])
            except _Timeout:
                counts["timeout (> 5 s)"] += 1
                examples.setdefault("timeout", text[:80])
            except BaseException as exc:  # noqa: BLE001
                counts[f"uncaught {type(exc).__name__}"] += 1
                examples.setdefault(f"uncaught {type(exc).__name__}", text[:80])
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            max_time = max(max_time, time.perf_counter() - started)
    print(json.dumps({"counts": counts, "unlocated": unlocated, "examples": examples, "max_time": max_time}))


def old_tree(commit: str) -> Path:
    """The old commit's pyop and pyop_scaffold, importable from `<tree>/links` (PYTHONPATH)."""
    tree = Path(tempfile.mkdtemp(prefix="pyop-old-"))
    archive = subprocess.run(["git", "archive", commit, "pyop", "scaffold"], cwd=REPO, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    links = tree / "links"
    links.mkdir()
    (links / "pyop").symlink_to(tree / "pyop")
    (links / "pyop_scaffold").symlink_to(tree / "scaffold")
    return links


def fuzz_pipeline(args: argparse.Namespace) -> None:
    inputs = pipeline_inputs(args)
    trees: list[tuple[str, str | None]] = [("new", None)]
    if not args.no_old:
        trees.append((f"old ({args.old_commit})", str(old_tree(args.old_commit))))
    totals: dict[str, dict[str, Any]] = {
        name: {"counts": Counter(), "unlocated": Counter(), "examples": {}, "max_time": 0.0} for name, _ in trees
    }
    chunk = 50
    for number, start in enumerate(range(0, len(inputs), chunk)):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(inputs[start : start + chunk], handle)
        order = trees if number % 2 == 0 else trees[::-1]  # interleaved, alternating which goes first
        for name, path in order:
            env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
            if path is not None:
                env["PYTHONPATH"] = path
            done = subprocess.run(
                [sys.executable, __file__, "--pipeline-worker", handle.name], env=env, capture_output=True, text=True
            )
            if done.returncode != 0:
                totals[name]["counts"]["worker crashed"] += 1
                totals[name]["examples"].setdefault("worker crashed", done.stderr[-300:])
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            totals[name]["counts"].update(result["counts"])
            totals[name]["unlocated"].update(result["unlocated"])
            for key, value in result["examples"].items():
                totals[name]["examples"].setdefault(key, value)
            totals[name]["max_time"] = max(totals[name]["max_time"], result["max_time"])
        Path(handle.name).unlink()
    print(f"4. make manifests: {len(inputs)} mutated markers on a field, a type or a kind, generated end to end")
    for name, _ in trees:
        total = totals[name]
        print(f"  {name}:")
        for key, value in sorted(total["counts"].items()):
            print(f"    {key:40} {value:6}")
        for key, value in total["unlocated"].most_common(8):
            print(f"      without file:line {value:4}x  {key!r}  e.g. +{total['examples'][key]!r}")
        for key in total["examples"]:
            if key.startswith(("uncaught", "timeout", "worker")):
                print(f"      {key} e.g. {total['examples'][key]!r}")
        print(f"    max time per input                       {total['max_time'] * 1000:6.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--old-commit", default="3e8de10")
    parser.add_argument("--no-old", action="store_true", help="only the current parser")
    parser.add_argument("--pipeline", type=int, default=1000, help="inputs run through make manifests (0: none)")
    parser.add_argument("--pipeline-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.setrecursionlimit(1000)
    if args.pipeline_worker:
        pipeline_worker(args.pipeline_worker)
        return
    old = None if args.no_old else load_old(args.old_commit)
    if args.inputs:
        fuzz_markers(args, old)
    if args.modules:
        fuzz_comment_lines(args, old)
    linear_time(old)
    if args.pipeline:
        fuzz_pipeline(args)


if __name__ == "__main__":
    main()
