#!/usr/bin/env bash
# Source: the project's peer kit, ../shared/bench/setup_accasim.sh (copied unchanged
# below this note, so that bench-peers works on a clone without ../shared).
# Creates a Python venv with AccaSim 1.1.3 (PyPI), the HPC workload simulator used as a
# speed and correctness peer. AccaSim does `from collections import Mapping`, which
# Python 3.10 removed; a .pth shim re-exports the ABCs so the package runs unchanged.
# usage: setup_accasim.sh VENV_DIR
set -euo pipefail
venv=${1:?usage: setup_accasim.sh VENV_DIR}
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --no-cache-dir accasim==1.1.3
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cat > "$site/accasim_py310_compat.py" <<'PY'
import collections, collections.abc
for _n in ('Mapping', 'MutableMapping', 'Sequence', 'Iterable', 'Callable'):
    if not hasattr(collections, _n):
        setattr(collections, _n, getattr(collections.abc, _n))
PY
echo 'import accasim_py310_compat' > "$site/zz_accasim_py310_compat.pth"
"$venv/bin/python" -c 'from accasim.base.simulator_class import Simulator' && echo "accasim ready in $venv"
