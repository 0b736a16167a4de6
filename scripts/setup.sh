#!/usr/bin/env bash
# Creates .venv (if needed) and installs autology-mcp with its test dependencies into it, then builds
# the Claude Code plugin into dist/plugin/ (scripts/plugin.sh), naming .venv/bin/python as its interpreter.
# Needs only python3 (3.11+) and network access to PyPI the first time.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - <<'PY'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"autology-mcp needs Python 3.11 or newer; python3 is {sys.version.split()[0]}")
PY

if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# Reinstall only when pyproject.toml changed since the last install, or when the .venv does not import
# this checkout's autology_mcp (the checkout was moved: the editable install still names the old place).
checkout="$PWD"
installed_here() {
    (cd / && "$checkout/.venv/bin/python" -c 'import pathlib, sys, autology_mcp
sys.exit(pathlib.Path(autology_mcp.__file__).resolve().parents[1] != pathlib.Path(sys.argv[1]).resolve())' "$checkout") \
        >/dev/null 2>&1
}
stamp=.venv/.autology-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || ! installed_here; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
    touch "$stamp"
fi
bash scripts/plugin.sh
