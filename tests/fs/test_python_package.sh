#!/bin/bash
# The smartio Python package's pytest suite (tests/python) against real
# smartiofs mounts of private fabrics.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/pyfind.sh"
py=$(pyfind pytest python3-pytest)
[ -c /dev/fuse ] || { echo "SKIP: /dev/fuse is missing"; exit 77; }
export PYTHONPATH="$here/../../python${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" -m pytest -q -p no:cacheprovider "$here/../python"
