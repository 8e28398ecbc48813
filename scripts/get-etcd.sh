#!/usr/bin/env bash
# Prints the path of an etcd binary for tests/apiserver_storage: $PYOP_ETCD, else etcd on PATH, else Debian's
# etcd-server installed with apt-get (as root, or through passwordless sudo). Exit code 1 when none can be had.
set -euo pipefail
if [ -n "${PYOP_ETCD:-}" ] && [ -x "$PYOP_ETCD" ]; then
  echo "$PYOP_ETCD"
  exit 0
fi
if command -v etcd >/dev/null 2>&1; then
  command -v etcd
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "get-etcd.sh: no etcd on PATH and no apt-get to install etcd-server with" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  as_root=()
elif sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "get-etcd.sh: no etcd on PATH, and installing etcd-server needs root or passwordless sudo" >&2
  exit 1
fi
if ! { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server; } >&2; then
  echo "get-etcd.sh: apt-get install etcd-server failed" >&2
  exit 1
fi
command -v etcd
