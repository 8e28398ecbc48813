{{ cookiecutter.license_header }}"""Group and version of the models in this package (Kubebuilder's groupversion_info.go).

+groupName={{ cookiecutter.qualified_group }}
"""

from pyop.api import GroupVersion

GROUP_VERSION = GroupVersion(group="{{ cookiecutter.qualified_group }}", version="{{ cookiecutter.version }}")
