"""A throwaway virtual environment that runs the tutorials on the checkout's pyop-kit.

Building pyop-kit's wheel takes minutes (tests/distributions does it once, for Getting started); the tutorials
test what the reader does with pyop, not its packaging. So the environment is fresh (the tutorial's
`pip install -e '.[dev]'` installs the reader's project there, never into the checkout's venv) but sees the
checkout's installed packages through a `.pth` file: pyop-kit with its extras, ruff and mypy are already satisfied,
and pip installs only the project.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def checkout_environment(root: Path) -> dict[str, str]:
    """Create the environment under `root`; returns the process environment of a shell activated in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    packages = subprocess.run(
        [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    # addsitedir (not a bare path) so that the checkout's own .pth files (the editable install) are read too.
    checkout = sysconfig.get_paths()["purelib"]
    (Path(packages) / "pyop-checkout.pth").write_text(f"import site; site.addsitedir({checkout!r})\n")
    # The checkout's console scripts point at its own interpreter: these run the environment's.
    programs = {"pyop": "from pyop_scaffold.cli.entry import main", "pip": "from pip._internal.cli.main import main"}
    for name, program in programs.items():
        script = root / "bin" / name
        script.write_text(f"#!{root / 'bin' / 'python'}\nimport sys\n{program}\nsys.exit(main())\n")
        script.chmod(0o755)
    environment = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "PYOP_DEBUG"}}
    environment["VIRTUAL_ENV"] = str(root)
    path = [p for p in environment.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPOSITORY))]
    environment["PATH"] = os.pathsep.join([str(root / "bin"), *path])
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return environment
