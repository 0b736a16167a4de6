"""Will an agent run the hooks ``autology setup`` wrote in this project? Read from the agent's own trust
and hook-review state (its files in the user's home), never guessed: one function per agent, each
returning a :class:`HookState`: ``runs``, ``off`` with the exact step that turns them on, or ``cannot
tell`` with why. ``autology doctor`` and the end of ``autology setup <agent>`` print them.

What each agent keeps, as the real CLIs wrote it (run under tmux against a stand-in model, in a
temporary home; the versions named):

- **Codex CLI 0.171.0**: project trust in ``$CODEX_HOME/config.toml`` (default ``~/.codex``),
  ``[projects."<path>"] trust_level = "trusted"`` (written by "Trust and continue"); project config and
  hooks are not loaded without it. Then each project hook must be reviewed: "Hooks need review" at
  start-up ("Trust all and continue") or ``/hooks`` then ``t`` writes ``[hooks.state."<abs path of
  .codex/hooks.json>:<event>:<group>:<handler>"] trusted_hash = "sha256:<hex>"``; toggling a hook off
  in ``/hooks`` adds ``enabled = false``. The hash is of the hook's normalised identity
  (:func:`codex_hook_hash`, checked against the hashes Codex wrote); a hook whose hash no longer
  matches is "modified" and does not run until reviewed again. ``codex exec`` skips unreviewed hooks
  silently (unless ``--dangerously-bypass-hook-trust``).
- **Gemini CLI 0.61.0**: folder trust in ``~/.gemini/trustedFolders.json`` (``GEMINI_CLI_HOME``
  replaces ``~``; ``GEMINI_CLI_TRUSTED_FOLDERS_PATH`` names the file), ``{"<path>": "TRUST_FOLDER" |
  "TRUST_PARENT" | "DO_NOT_TRUST"}``, the longest matching rule wins ("Trust folder" wrote
  ``TRUST_FOLDER`` for the project). Project hooks run only in a trusted folder; folder trust is
  enforced unless ``security.folderTrust.enabled`` is false in the user's settings;
  ``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts every folder; ``hooksConfig.enabled: false`` turns every
  hook off and ``hooksConfig.disabled`` names hooks that do not run. Gemini also keeps
  ``trusted_hooks.json``, but only to warn once about new project hooks: it runs them either way.
- **Copilot CLI 1.0.102**: ``$COPILOT_HOME/config.json`` (default ``~/.copilot``; JSON with ``//``
  comments) ``trustedFolders``: "Yes, and remember this folder" adds the path; a remembered parent
  folder covers the project (checked). "Yes" alone trusts for that session only, so nothing says the
  next one will run them. ``disableAllHooks: true`` in ``settings.json``, which Copilot's help says
  turns every hook off, did not stop them under ``copilot -p``, so it is not read.
- **Claude Code 2.1.197**: ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set)
  ``projects["<path>"].hasTrustDialogAccepted`` (written by "Yes, I trust this folder"; a trusted
  parent folder covers the project, checked). Interactive Claude Code does not start in an untrusted
  folder and ran the project hooks once the dialog was accepted; ``claude -p`` ran them in an untrusted
  one. So they run in every session Claude Code starts, and the trust state only changes what is said.
  ``disableAllHooks: true`` in the user's or the project's settings turns every hook off (checked).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RUNS, OFF, CANNOT_TELL = "runs", "off", "cannot tell"


@dataclass(frozen=True)
class HookState:
    """Whether ``agent`` will run autology's hooks in the project: ``state`` is ``runs``, ``off`` or
    ``cannot tell``; ``why`` says what was read; ``step`` is what turns them on (when off)."""

    agent: str
    state: str
    why: str
    step: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def lines(self) -> list[str]:
        mark, says = {RUNS: ("✓", "hooks run"), OFF: ("✗", "hooks off"), CANNOT_TELL: ("?", "cannot tell")}[self.state]
        lines = [f"{mark} {self.agent}: {says}: {self.why}"]
        if self.step:
            lines.append(f"    → {self.step}")
        return lines


class _Unreadable(Exception):
    """A file of the agent's that exists but cannot be read or parsed: the state cannot be told."""


# --- reading the agents' files ------------------------------------------------------------------------


def strip_json_comments(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments outside strings (Gemini's and Copilot's config
    files allow them); line breaks are kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            out.append("".join(ch for ch in text[i:n if j < 0 else j + 2] if ch == "\n"))
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _json_file(path: Path, comments: bool = False) -> Any | None:
    """The JSON value in ``path`` (None: no file); raises :class:`_Unreadable`."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unreadable(f"{path}: {exc}") from exc
    if not text.strip():
        return None
    try:
        return json.loads(strip_json_comments(text) if comments else text)
    except ValueError as exc:
        raise _Unreadable(f"{path} is not valid JSON ({exc})") from exc


def _object(path: Path, comments: bool = False) -> dict[str, Any]:
    value = _json_file(path, comments)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Unreadable(f"{path} is not a JSON object")
    return value


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def _under(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _forms(root: Path) -> list[Path]:
    """The project's path as given and with links resolved (agents key it either way)."""
    resolved = root.resolve()
    return [root] if resolved == root else [resolved, root]


# --- Codex CLI ------------------------------------------------------------------------------------------


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


_CODEX_HANDLER_KEYS = {"type", "command", "timeout", "async"}
_CODEX_MATCHERLESS = {"user_prompt_submit", "stop"}  # Codex ignores a matcher on these events


def codex_hook_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    """The hash Codex 0.171.0 records in ``trusted_hash`` for one command hook: SHA-256 of the compact,
    key-sorted JSON of ``{event_name, matcher, hooks: [normalised handler]}`` (timeout defaults to 600 s,
    ``async`` to false; an absent matcher is left out). Checked against the hashes the real CLI wrote
    for the four hooks ``autology setup codex`` writes."""
    name = _snake(event)
    normal: dict[str, Any] = {"type": "command", "command": handler.get("command"),
                              "timeout": max(1, int(handler.get("timeout") or 600)),
                              "async": bool(handler.get("async", False))}
    identity: dict[str, Any] = {"event_name": name, "hooks": [normal]}
    if matcher is not None and name not in _CODEX_MATCHERLESS:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _codex_trust(config: dict[str, Any], root: Path) -> str | None:
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return None
    for form in _forms(root):
        entry = projects.get(str(form))
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return entry["trust_level"]
    return None


def codex(root: Path, env: Mapping[str, str] | None = None) -> HookState:
    env = os.environ if env is None else env
    config_path = Path(env["CODEX_HOME"]) / "config.toml" if env.get("CODEX_HOME") else \
        _home(env) / ".codex" / "config.toml"
    try:
        hooks = _object(root / ".codex" / "hooks.json").get("hooks")
        try:
            config = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            config = {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise _Unreadable(f"{config_path}: {exc}") from exc
    except _Unreadable as exc:
        return HookState("codex", CANNOT_TELL, str(exc))
    start = f"start `codex` in {root}"
    trust = _codex_trust(config, root)
    if trust != "trusted":
        loads = "so Codex loads neither .codex/config.toml nor .codex/hooks.json"
        review = "then “Trust all and continue” when it says “Hooks need review”"
        if trust:
            return HookState("codex", OFF, f"{config_path} sets trust_level = {trust!r} for the project, {loads}",
                             f"set trust_level = \"trusted\" under [projects.\"{root}\"] in {config_path}, {start}, "
                             f"{review}")
        return HookState("codex", OFF, f"the project is not trusted in {config_path}, {loads}",
                         f"{start}, choose “Trust and continue”, {review}")
    reviews = _codex_reviews(root, hooks, config)
    new, changed, disabled, unknown = (reviews[k] for k in ("new", "changed", "disabled", "unknown"))
    ours = sum(len(v) for v in reviews.values())
    if not ours:
        return HookState("codex", OFF, f"no autology hook in {root / '.codex' / 'hooks.json'}",
                         "run `autology setup codex`")
    review = (f"{start} and choose “Trust all and continue” when it says “Hooks need review” (or open /hooks and "
              "press t); `codex exec` skips unreviewed hooks silently")
    if disabled:
        return HookState("codex", OFF, f"{', '.join(disabled)} turned off in /hooks ({config_path}: enabled = false)"
                         + (f"; {', '.join(new + changed)} not reviewed" if new or changed else ""),
                         f"{start}, open /hooks, turn them on (space)" + (" and trust the others (t)" if new or changed
                                                                           else ""))
    if new or changed:
        parts = [f"{', '.join(new)} not reviewed"] if new else []
        parts += [f"{', '.join(changed)} changed since reviewed"] if changed else []
        return HookState("codex", OFF, f"the project is trusted, but {'; '.join(parts)} (hooks.state in {config_path})"
                         , review)
    if unknown:
        return HookState("codex", CANNOT_TELL, f"{', '.join(unknown)} reviewed, but with fields autology does not "
                         "hash; if Codex lists them as modified in /hooks, review them there")
    return HookState("codex", RUNS, f"project trusted and its {ours} hooks reviewed in {config_path}")


def _codex_reviews(root: Path, hooks: Any, config: dict[str, Any]) -> dict[str, list[str]]:
    """autology's hooks in .codex/hooks.json (by event) as Codex's hooks.state has them: reviewed ("ok"),
    "new" (never reviewed), "changed" since reviewed, "disabled" in /hooks, or reviewed with fields
    :func:`codex_hook_hash` does not know ("unknown")."""
    table = config.get("hooks") if isinstance(config.get("hooks"), dict) else {}
    states = table.get("state") if isinstance(table.get("state"), dict) else {}
    reviews: dict[str, list[str]] = {"ok": [], "new": [], "changed": [], "disabled": [], "unknown": []}
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if not (isinstance(handler, dict) and _is_ours(handler.get("command"))):
                    continue
                keys = [f"{form / '.codex' / 'hooks.json'}:{_snake(event)}:{g}:{h}" for form in _forms(root)]
                state = next((states[k] for k in keys if isinstance(states.get(k), dict)), {})
                if "trusted_hash" not in state:
                    verdict = "new"
                elif state.get("enabled") is False:
                    verdict = "disabled"
                elif state["trusted_hash"] == codex_hook_hash(event, group.get("matcher"), handler):
                    verdict = "ok"
                else:
                    verdict = "unknown" if set(handler) - _CODEX_HANDLER_KEYS else "changed"
                reviews[verdict].append(event)
    return reviews


def _is_ours(command: Any) -> bool:
    from autology_mcp.setup.edits import is_ours

    return isinstance(command, str) and is_ours({"command": command})


# --- Gemini CLI -----------------------------------------------------------------------------------------


def _gemini_rule(rules: dict[str, Any], root: Path) -> tuple[str, str] | None:
    """The trustedFolders rule that decides ``root`` (the longest matching path), as Gemini 0.61.0 reads it."""
    location = root.resolve()
    best: tuple[str, str] | None = None
    for path, level in rules.items():
        folder = Path(path).parent if level == "TRUST_PARENT" else Path(path)
        folder = folder.resolve() if folder.exists() else folder
        if _under(location, folder) and (best is None or len(path) > len(best[0])):
            best = (path, level)
    return best


def _gemini_system_settings(env: Mapping[str, str]) -> Path:
    return Path(env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or "/etc/gemini-cli/settings.json")


def gemini(root: Path, env: Mapping[str, str] | None = None) -> HookState:
    env = os.environ if env is None else env
    gemini_dir = Path(env.get("GEMINI_CLI_HOME") or _home(env)) / ".gemini"
    folders_path = Path(env["GEMINI_CLI_TRUSTED_FOLDERS_PATH"]) if env.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH") else \
        gemini_dir / "trustedFolders.json"
    settings_paths = [gemini_dir / "settings.json", _gemini_system_settings(env)]
    try:
        settings = [(p, _object(p, comments=True)) for p in settings_paths]
        project_settings = _object(root / ".gemini" / "settings.json", comments=True)
        rules = _object(folders_path, comments=True)
    except _Unreadable as exc:
        return HookState("gemini", CANNOT_TELL, str(exc))
    for path, values in [*settings, (root / ".gemini" / "settings.json", project_settings)]:
        hooks_config = values.get("hooksConfig") if isinstance(values.get("hooksConfig"), dict) else {}
        if hooks_config.get("enabled") is False:
            return HookState("gemini", OFF, f"hooksConfig.enabled is false in {path}",
                             f"remove \"enabled\": false from hooksConfig in {path}")
        disabled = hooks_config.get("disabled") if isinstance(hooks_config.get("disabled"), list) else []
        ours = [d for d in disabled if d == "autology" or _is_ours(d)]
        if ours:
            return HookState("gemini", OFF, f"hooksConfig.disabled in {path} names {', '.join(map(str, ours))}",
                             f"take them out of hooksConfig.disabled in {path}")
    if env.get("GEMINI_RESTRICTED_MODE") == "true" or env.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return HookState("gemini", OFF, "this shell sets GEMINI_RESTRICTED_MODE=true or GEMINI_CLI_TRUST_WORKSPACE=false",
                         "unset it where you run gemini")
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return HookState("gemini", RUNS, "this shell sets GEMINI_CLI_TRUST_WORKSPACE=true: every folder is trusted")
    for path, values in settings:
        security = values.get("security") if isinstance(values.get("security"), dict) else {}
        folder_trust = security.get("folderTrust") if isinstance(security.get("folderTrust"), dict) else {}
        if folder_trust.get("enabled") is False:
            return HookState("gemini", RUNS, f"folder trust is turned off in {path} (security.folderTrust.enabled)")
    bad = [f"{p!r}: {v!r}" for p, v in rules.items() if v not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST")]
    if bad:
        return HookState("gemini", OFF, f"{folders_path} has invalid rules ({'; '.join(bad)}): Gemini refuses to start",
                         f"fix {folders_path}")
    rule = _gemini_rule(rules, root)
    start = f"start `gemini` in {root} and choose “Trust folder”"
    if rule is None:
        return HookState("gemini", OFF, f"the folder is not trusted ({folders_path} has no rule for it)",
                         f"{start} (headless: --skip-trust or GEMINI_CLI_TRUST_WORKSPACE=true, each run)")
    if rule[1] == "DO_NOT_TRUST":
        return HookState("gemini", OFF, f"{folders_path} says DO_NOT_TRUST for {rule[0]}",
                         f"change it to TRUST_FOLDER in {folders_path} (or /permissions in gemini)")
    return HookState("gemini", RUNS, f"{folders_path}: {rule[1]} for {rule[0]}")


# --- Copilot CLI ----------------------------------------------------------------------------------------


def copilot(root: Path, env: Mapping[str, str] | None = None) -> HookState:
    env = os.environ if env is None else env
    home = Path(env["COPILOT_HOME"]) if env.get("COPILOT_HOME") else _home(env) / ".copilot"
    config_path, settings_path = home / "config.json", home / "settings.json"
    try:
        config = _object(config_path, comments=True)
        settings = _object(settings_path, comments=True)
    except _Unreadable as exc:
        return HookState("copilot", CANNOT_TELL, str(exc))
    if env.get("COPILOT_ALLOW_ALL") == "true":
        return HookState("copilot", RUNS, "this shell sets COPILOT_ALLOW_ALL=true: every folder is trusted")
    location = root.resolve()
    for path, values in ((config_path, config), (settings_path, settings)):
        folders = values.get("trustedFolders") if isinstance(values.get("trustedFolders"), list) else []
        for folder in folders:
            if isinstance(folder, str) and folder and (_under(location, Path(folder)) or
                                                      _under(location, Path(folder).resolve())):
                return HookState("copilot", RUNS, f"{folder} is a trusted folder in {path}")
    return HookState("copilot", OFF, f"the folder is not among the trustedFolders of {config_path}",
                     f"start `copilot` in {root} and choose “Yes, and remember this folder for future sessions” "
                     "(“Yes” alone lasts one session; headless: --trust-folder, each run)")


# --- Claude Code ----------------------------------------------------------------------------------------


def claude_code(root: Path, env: Mapping[str, str] | None = None) -> HookState:
    env = os.environ if env is None else env
    config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else None
    config_path = (config_dir or _home(env)) / ".claude.json"
    user_settings = (config_dir or _home(env) / ".claude") / "settings.json"
    settings_paths = [user_settings, root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    try:
        config = _object(config_path)
        settings = [(p, _object(p)) for p in settings_paths]
    except _Unreadable as exc:
        return HookState("claude-code", CANNOT_TELL, str(exc))
    for path, values in settings:
        if values.get("disableAllHooks") is True:
            return HookState("claude-code", OFF, f"disableAllHooks is true in {path}",
                             f"remove \"disableAllHooks\": true from {path}")
    projects = config.get("projects") if isinstance(config.get("projects"), dict) else {}
    for form in _forms(root):
        for folder in (form, *form.parents):
            entry = projects.get(str(folder))
            if isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True:
                return HookState("claude-code", RUNS, f"{folder} is trusted in {config_path}")
    return HookState("claude-code", RUNS, f"in every session Claude Code starts here: the folder is not trusted yet "
                     f"in {config_path}, so `claude` asks first (“Yes, I trust this folder”) and does not start "
                     "without it; `claude -p` runs them without asking")


READERS = {"claude-code": claude_code, "codex": codex, "gemini": gemini, "copilot": copilot}


def hook_state(agent: str, root: Path, env: Mapping[str, str] | None = None) -> HookState:
    return READERS[agent](root, env)


def set_up_agents(root: Path) -> list[str]:
    """The agents whose autology hooks are in the project (``autology setup <agent>`` ran)."""
    from autology_mcp.setup.agents import AGENTS, HOOKS_FILE
    from autology_mcp.setup.apply import has_our_hooks

    return [agent for agent in AGENTS if has_our_hooks(root, HOOKS_FILE[agent])]


def hook_states(root: Path, env: Mapping[str, str] | None = None) -> list[HookState]:
    """One state per agent set up in the project."""
    return [hook_state(agent, root, env) for agent in set_up_agents(root)]


def render(states: list[HookState]) -> str:
    if not states:
        return "hooks: no agent set up here (`autology setup <agent>` writes an agent's hooks)"
    lines = ["hooks (read from each agent's own trust and review state):"]
    for state in states:
        lines += ["  " + line for line in state.lines()]
    return "\n".join(lines)
