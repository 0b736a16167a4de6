#!/usr/bin/env bash
# Optional tools some tests use; without them those tests are skipped, never failed:
#   - Claude Code (npm @anthropic-ai/claude-code): `claude plugin validate --strict` and the
#     end-to-end plugin test (tests/test_plugin.py, tests/test_hooks_claude_e2e.py);
#   - OpenAI Codex CLI, Gemini CLI and GitHub Copilot CLI (npm, pinned to the versions the hooks were
#     checked against): the end-to-end hook tests for those agents (tests/test_hooks_agents_e2e.py);
#   - Chromium (Debian package): opening the HTML graph export headless (tests/test_export.py);
#   - tmux (Debian package): driving each agent's interactive interface (tests/test_agents_interactive.py).
# Each is installed only if missing and only if its package manager is there; a failure is reported
# and skipped. scripts/test.sh runs this when CI=true or AUTOLOGY_TEST_EXTRAS=1.
set -uo pipefail

if ! command -v claude >/dev/null 2>&1; then
    if command -v npm >/dev/null 2>&1; then
        echo "installing Claude Code (npm @anthropic-ai/claude-code) for the plugin tests..." >&2
        npm install --global --silent --no-fund --no-audit @anthropic-ai/claude-code >/dev/null 2>&1 \
            || echo "could not install Claude Code; the plugin tests will be skipped" >&2
    else
        echo "npm not found; the Claude Code plugin tests will be skipped" >&2
    fi
fi

# command, npm package pinned: the versions whose hook payloads and outputs docs/agents/ describe
for agent in "codex @openai/codex@0.171.0" "gemini @google/gemini-cli@0.61.0" "copilot @github/copilot@1.0.102"; do
    read -r command package <<<"$agent"
    if ! command -v "$command" >/dev/null 2>&1; then
        if command -v npm >/dev/null 2>&1; then
            echo "installing $package (npm) for the agent hook tests..." >&2
            npm install --global --silent --no-fund --no-audit "$package" >/dev/null 2>&1 \
                || echo "could not install $package; the $command hook tests will be skipped" >&2
        else
            echo "npm not found; the $command hook tests will be skipped" >&2
        fi
    fi
done

if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Chromium (Debian) for the HTML export test..." >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
        || echo "could not install Chromium; the HTML export browser test will be skipped" >&2
fi
if ! command -v tmux >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing tmux (Debian) for the interactive agent tests..." >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; } >/dev/null 2>&1 \
        || echo "could not install tmux; the interactive agent tests will be skipped" >&2
fi
exit 0
