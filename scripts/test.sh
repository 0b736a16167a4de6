#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite. Extra arguments go to pytest.
# In CI (CI=true), or with AUTOLOGY_TEST_EXTRAS=1, it first installs the optional tools some
# tests need (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, Chromium): see scripts/install-test-extras.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${CI:-}" = "true" ] || [ "${AUTOLOGY_TEST_EXTRAS:-}" = "1" ]; then
    bash scripts/install-test-extras.sh
fi
exec .venv/bin/python -m pytest -q "$@"
