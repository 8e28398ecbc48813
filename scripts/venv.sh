# Sourced by the scripts: create .venv on first use and install pyop-kit with its development extras into it.
# The editable install links every file into a tree (tools/pyop_build_backend.py), so it is redone when
# pyproject.toml changes or a file is added to or removed from the packages.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
stamp=$( (cat pyproject.toml setup.py; git ls-files -co --exclude-standard pyop scaffold project_templates 2>/dev/null) | cksum)
if [ "$(cat .venv/.pyop-installed 2>/dev/null)" != "$stamp" ] || ! python -c "import pyop_scaffold, pytest" >/dev/null 2>&1; then
  python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  python -m pip uninstall --quiet --yes pyop >/dev/null 2>&1 || true   # an older checkout's name for this package
  python -m pip install --quiet -e '.[dev]'
  echo "$stamp" > .venv/.pyop-installed
fi
