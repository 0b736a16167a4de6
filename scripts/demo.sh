#!/usr/bin/env bash
# Sets everything up, then runs the demo: a scripted MCP session over stdio on a copy of examples/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python examples/demo.py "$@"
