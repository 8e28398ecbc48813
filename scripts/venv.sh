# Sourced by the scripts: create .venv on first use and install pyop (with test tools) into it.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
. .venv/bin/activate
if ! python -c "import scaffold, pytest, kubernetes_validate" >/dev/null 2>&1 || [ pyproject.toml -nt .venv/.pyop-installed ]; then
  python -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  python -m pip install --quiet -e '.[test]'
  touch .venv/.pyop-installed
fi
