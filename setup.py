"""The package list, which pyproject.toml cannot compute: `scaffold/` installs as `pyop_scaffold`.

Every package below `scaffold/` is found and renamed, so a new subpackage needs no edit here; the templates ride
along as data of `pyop_scaffold.project_templates` (see pyproject.toml's package-data).
"""

from setuptools import find_packages, setup

generator_packages = ["pyop_scaffold" + name.removeprefix("scaffold") for name in find_packages(include=["scaffold*"])]
runtime_packages = find_packages(include=["pyop", "pyop.*"])

setup(
    packages=[*runtime_packages, *generator_packages, "pyop_scaffold.project_templates"],
    package_dir={"pyop_scaffold": "scaffold", "pyop_scaffold.project_templates": "project_templates"},
)
