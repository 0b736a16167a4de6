#!/bin/sh
# Launches autology for the Claude Code plugin: `run.sh hook <event>` (hooks/hooks.json) and
# `run.sh serve` (.mcp.json). It uses, in order:
#   1. $AUTOLOGY_PYTHON, a Python that has autology-mcp installed;
#   2. the interpreter named in <plugin root>/autology-python, which scripts/plugin.sh (run by
#      scripts/setup.sh) writes into dist/plugin/: the checkout's .venv/bin/python, by absolute path,
#      since the plugin folder holds no virtualenv (and Claude Code may run a copy of it from its cache);
#   3. the `autology` command on PATH (pip install / pipx install autology-mcp).
# Hooks fail open: whatever happens, `run.sh hook ...` exits 0.
root="$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)"
# The hooks name the plugin's /autology:… skills only when they run as the plugin's (issue 39): Claude
# Code sets this for a plugin's hooks; set it here too, for a launcher started any other way.
export CLAUDE_PLUGIN_ROOT="${CLAUDE_PLUGIN_ROOT:-$root}"
python=""
recorded=""
if [ -n "${AUTOLOGY_PYTHON:-}" ]; then
    python="$AUTOLOGY_PYTHON"
elif [ -f "$root/autology-python" ]; then
    IFS= read -r recorded <"$root/autology-python" || true
    if [ -n "$recorded" ] && [ -x "$recorded" ]; then
        python="$recorded"
    fi
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
if [ -n "$recorded" ]; then
    echo "autology: $recorded (named in $root/autology-python) is gone. Run scripts/setup.sh in the autology checkout, then restart Claude Code (see docs/claude-code.md)." >&2
else
    echo "autology: not installed. Run scripts/setup.sh in the autology checkout, or pip install autology-mcp (see docs/claude-code.md)." >&2
fi
exit 1
