{{ cookiecutter.license_header }}"""The aggregated API server's entry point: `python -m {{ cookiecutter.package }}.apiserver [flags]`.

The flags are k8s.io/apiserver's (`--help` lists them): --secure-port, the serving certificate (--tls-cert-file,
--tls-private-key-file, or a self-signed one in --cert-dir), the delegated authentication and authorization to
kube-apiserver (--authentication-kubeconfig, --authorization-kubeconfig, in-cluster by default) and the storage
(--storage-backend memory, file or etcd3; --etcd-servers). The server runs until SIGTERM.
"""

from __future__ import annotations

from pyop.apiserver import run

from {{ cookiecutter.package }}.apiserver import GROUP_VERSIONS


def main() -> None:
    run(GROUP_VERSIONS, prog="python -m {{ cookiecutter.package }}.apiserver")


if __name__ == "__main__":
    main()
