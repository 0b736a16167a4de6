#!/usr/bin/env bash
# Builds the Claude Code plugin into dist/plugin/, the folder the local marketplace
# (.claude-plugin/marketplace.json) points at. Claude Code copies that folder, whole, into its plugin
# cache on `claude plugin install`, so it holds only what the plugin needs:
#   .claude-plugin/plugin.json  .mcp.json  hooks/hooks.json  hooks/run.sh  skills/  agents/
# and autology-python, one line naming the Python interpreter that has autology-mcp installed
# (hooks/run.sh reads it; the copy in the cache cannot see the checkout's .venv otherwise).
#
#   bash scripts/plugin.sh            # records this checkout's .venv/bin/python, if there is one
#   bash scripts/plugin.sh PYTHON     # records PYTHON instead (it must be able to import autology_mcp)
#
# scripts/setup.sh runs it. Claude Code 2.1 loads a plugin of a local marketplace from this folder
# in place (and also copies it into ~/.claude/plugins/cache/), so after changing the files above,
# rerun it (or setup.sh) and restart Claude Code. A moved checkout: see docs/claude-code.md.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${1:-}"
if [ -z "$python" ] && [ -x .venv/bin/python ]; then
    python="$PWD/.venv/bin/python"
fi
if [ -n "$python" ]; then
    case "$python" in
        /*) ;;
        */*) python="$PWD/$python" ;;
        *) python="$(command -v "$python" || true)" ;;
    esac
    # From / so that this checkout's source folder is not what makes the import work.
    if [ -z "$python" ] || ! (cd / && "$python" -c "import autology_mcp.cli.main") >/dev/null 2>&1; then
        echo "scripts/plugin.sh: ${1:-.venv/bin/python} cannot import autology_mcp (run scripts/setup.sh first)" >&2
        exit 1
    fi
fi

out=dist/plugin
rm -rf "$out.new"
mkdir -p "$out.new/.claude-plugin" "$out.new/hooks"
cp .claude-plugin/plugin.json "$out.new/.claude-plugin/"
cp .mcp.json "$out.new/"
cp hooks/hooks.json hooks/run.sh "$out.new/hooks/"
cp -R skills agents "$out.new/"
if [ -n "$python" ]; then
    printf '%s\n' "$python" >"$out.new/autology-python"
fi
rm -rf "$out"
mv "$out.new" "$out"

if [ -n "$python" ]; then
    echo "plugin: $out (hooks and server run ${python#"$PWD/"})" >&2  # the checkout's own .venv, shortly
else
    echo "plugin: $out (no interpreter recorded: hooks and server use \$AUTOLOGY_PYTHON or \`autology\` on PATH)" >&2
fi
