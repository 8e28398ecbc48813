# Sourced by the scripts: create .venv on first use and install pyop-kit with its development extras into it.
# The editable install (tools/pyop_build_backend.py) serves the checkout itself; it is redone when pyproject.toml
# or setup.py changes.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
stamp=$(cat pyproject.toml setup.py tools/pyop_build_backend.py | cksum)
if [ "$(cat .venv/.pyop-installed 2>/dev/null)" != "$stamp" ] || ! python -c "import pyop_scaffold, pytest" >/dev/null 2>&1; then
  python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  python -m pip uninstall --quiet --yes pyop >/dev/null 2>&1 || true   # an older checkout's name for this package
  python -m pip install --quiet -e '.[dev]'
  echo "$stamp" > .venv/.pyop-installed
fi
