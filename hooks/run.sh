#!/bin/sh
# Launches autology for the Claude Code plugin: `run.sh hook <event>` (hooks/hooks.json) and
# `run.sh serve` (.mcp.json). It uses, in order:
#   1. $AUTOLOGY_PYTHON, a Python that has autology-mcp installed;
#   2. the plugin's own virtualenv, <plugin root>/.venv (what scripts/setup.sh creates);
#   3. the `autology` command on PATH (pip install / pipx install autology-mcp).
# Hooks fail open: whatever happens, `run.sh hook ...` exits 0.
root="$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)"
python=""
if [ -n "${AUTOLOGY_PYTHON:-}" ]; then
    python="$AUTOLOGY_PYTHON"
elif [ -x "$root/.venv/bin/python" ]; then
    python="$root/.venv/bin/python"
fi

if [ "${1:-}" = "hook" ]; then
    shift
    payload="$(cat)"
    # PostToolUse fires after every Bash call: start Python only when the payload could hold a
    # git commit or a gh pr command (the handler then decides for real).
    if [ "${1:-}" = "post-commit" ]; then
        case "$payload" in
            *commit*|*gh*pr*) ;;
            *) exit 0 ;;
        esac
    fi
    if [ -n "$python" ]; then
        printf '%s\n' "$payload" | "$python" -m autology_mcp.hooks "$@"
    elif command -v autology >/dev/null 2>&1; then
        printf '%s\n' "$payload" | autology hook "$@"
    fi
    exit 0
fi

if [ -n "$python" ]; then
    exec "$python" -m autology_mcp "$@"
elif command -v autology >/dev/null 2>&1; then
    exec autology "$@"
fi
echo "autology: not installed. Run scripts/setup.sh in the plugin directory, or pip install autology-mcp (see docs/claude-code.md)." >&2
exit 1
