"""Installed size of pyop-kit's dependency sets: what an operator image carries, and what the CLI and tests add.

Each set is installed from a wheel of this checkout into a fresh virtual environment (`pip install <wheel>`,
`<wheel>[cli]`, `<wheel>[cli,testing]`); the figure is the size of the files under site-packages, .pyc files
included (pip compiles at install, as the image's compileall does), minus what a fresh environment already holds
(pip, and setuptools before Python 3.12: not counted). The largest distributions of each set are listed by the
size of the files their RECORD names. Needs the index for the dependencies.

    python bench/bench_install_size.py [--wheel dist/pyop_kit-0.1.0-py3-none-any.whl] [--top 6]
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
SETS = [("runtime (the operator image)", ""), ("cli", "[cli]"), ("cli + testing", "[cli,testing]")]


def build_wheel(folder: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(folder), str(REPOSITORY)],
        check=True,
        capture_output=True,
    )
    return next(folder.glob("pyop_kit-*.whl"))


def site_packages(root: Path) -> Path:
    return next(root.glob("lib/python*/site-packages"))


def tree_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def by_distribution(site: Path) -> dict[str, int]:
    """Bytes per installed distribution, from the files each RECORD lists."""
    sizes = {}
    for record in site.glob("*.dist-info/RECORD"):
        total = 0
        with record.open(newline="") as handle:
            for row in csv.reader(handle):
                path = (site / row[0]).resolve() if row else None
                if path is not None and path.is_file() and path.is_relative_to(site.resolve()):
                    total += path.stat().st_size
        sizes[record.parent.name.split("-")[0]] = total
    return sizes


def measure(wheel: Path, extras: str, scratch: Path, baseline: Path) -> tuple[float, int, dict[str, int]]:
    root = scratch / f"env{len(list(scratch.iterdir()))}"
    venv.create(root, with_pip=True)
    command = [str(root / "bin" / "python"), "-m", "pip", "install", "-q", f"{wheel}{extras}"]
    subprocess.run(command, check=True, capture_output=True)
    site = site_packages(root)
    fresh = by_distribution(baseline)
    distributions = {name: size for name, size in by_distribution(site).items() if name not in fresh}
    return (tree_size(site) - tree_size(baseline)) / 1e6, len(distributions), distributions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="a pyop-kit wheel (default: built from this checkout)")
    parser.add_argument("--top", type=int, default=6, help="largest distributions listed per set")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pyop-size-") as temp:
        scratch = Path(temp)
        wheel = args.wheel.resolve() if args.wheel else build_wheel(scratch / "wheel")
        (scratch / "envs").mkdir()
        empty = scratch / "envs" / "empty"
        venv.create(empty, with_pip=True)
        baseline = site_packages(empty)
        held = ", ".join(sorted(by_distribution(baseline)))
        print(f"{wheel.name}, Python {sys.version_info.major}.{sys.version_info.minor}, {sys.platform}")
        print(f"(a fresh environment's site-packages, {held}: {tree_size(baseline) / 1e6:.1f} MB, not counted)")
        previous: dict[str, int] = {}
        for label, extras in SETS:
            size, count, distributions = measure(wheel, extras, scratch / "envs", baseline)
            print(f"\n{label:<30} {size:7.1f} MB  {count} distributions")
            added = {name: b for name, b in distributions.items() if name not in previous}
            heading = "largest" if not previous else "largest of those it adds"
            top = sorted(added.items(), key=lambda item: -item[1])[: args.top]
            print(f"  {heading}: " + ", ".join(f"{name} {b / 1e6:.1f} MB" for name, b in top))
            previous = distributions


if __name__ == "__main__":
    main()
