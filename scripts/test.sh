#!/usr/bin/env bash
# Sets everything up, then runs the whole test suite. Extra arguments go to pytest.
# In CI (CI=true), or with AUTOLOGY_TEST_EXTRAS=1, it first installs the optional tools some
# tests need (Claude Code, Codex CLI, Gemini CLI, Copilot CLI, Chromium): see scripts/install-test-extras.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The semantic recall tests (issue 31) run the optional extra's real code on tiny generated models: the
# test run installs the extra (the product, and the demo, work without it).
if ! .venv/bin/python -c "import fastembed" >/dev/null 2>&1; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test,semantic]"
fi
if [ "${CI:-}" = "true" ] || [ "${AUTOLOGY_TEST_EXTRAS:-}" = "1" ]; then
    bash scripts/install-test-extras.sh
fi
exec .venv/bin/python -m pytest -q "$@"
