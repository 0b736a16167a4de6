"""Scripted, in-process stand-ins for the model APIs of three coding agents, so their real CLIs can be
run non-interactively against 127.0.0.1 (nothing leaves the machine) and a test can read what reached
the model: the OpenAI Responses API for the Codex CLI, the Gemini API for the Gemini CLI, and OpenAI
chat completions for the GitHub Copilot CLI (BYOK, offline).

A stand-in plays a script, one step per model turn of the main loop: the step played is the number of
tool results already in the conversation, so each CLI run starts the script again. Steps:

    say(text)                 the model answers with text (after the script it says "Done.")
    read(path)                the model reads a file: Codex `exec_command {"cmd": "cat <path>"}` (or
                              read(path, command="sed -n '1,40p' <path>")), Gemini `read_file
                              {file_path}`, Copilot `view {path}` (Copilot wants an absolute path)
    edit(path, old, new)      the model edits a file: Codex an `apply_patch` custom tool call with
                              "*** Update File: <path>" (old and new are whole lines there), Gemini
                              `replace {file_path, old_string, new_string}`, Copilot `edit {path,
                              old_str, new_str}`
    shell(command)            the model runs a shell command: Codex `exec_command {"cmd"}`, Gemini
                              `run_shell_command {command}`, Copilot `bash {command}`

Every request is logged (``model.requests``: ``{"path", "headers", "body"}``); ``model.turns()`` are
the bodies of the main loop's requests and ``model.sent()`` those as JSON text, to assert on.

The *_env helpers write the user-level configuration each CLI needs (provider, auth, trust) under a
temporary HOME and return the environment to run it with; the *_command helpers give the command line.
Transcripts land under that HOME: Codex ``$CODEX_HOME/sessions/**/rollout-*.jsonl`` (CODEX_HOME =
HOME/.codex), Gemini ``HOME/.gemini/tmp/<project>/chats/session-*.jsonl``, Copilot
``$COPILOT_HOME/session-state/<id>/events.jsonl`` (COPILOT_HOME = HOME/.copilot): the paths their hooks
are given (``transcripts()`` lists them).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CODEX_MODEL = "gpt-5.5"  # a slug from Codex's bundled catalog: the request then offers the apply_patch tool
COPILOT_MODEL = "gpt-4.1"
DONE = "Done."


@dataclass(frozen=True)
class Step:
    kind: str  # say | read | edit | shell
    args: dict = field(default_factory=dict)


def say(text: str) -> Step:
    return Step("say", {"text": text})


def read(path: str | Path, command: str | None = None) -> Step:
    """Read ``path``; ``command`` is the shell command Codex runs for it (``cat <path>`` by default)."""
    return Step("read", {"path": str(path), "command": command or f"cat {path}"})


def edit(path: str | Path, old: str, new: str) -> Step:
    return Step("edit", {"path": str(path), "old": old, "new": new})


def shell(command: str) -> Step:
    return Step("shell", {"command": command})


def git_env() -> dict[str, str]:
    return {
        "GIT_AUTHOR_NAME": "T",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: this PATH (as it is: the hook commands setup writes must not need `autology`
    on it), HOME, git identity, and PYTHONPATH when the tests run with one (a checkout tested with the
    interpreter of another: its hooks and server run the checkout's code)."""
    path = os.environ.get("PATH", "/usr/bin:/bin")
    source = {"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}
    return {"PATH": path, "HOME": str(home), "LANG": "C.UTF-8", **git_env(), **source}


class StandIn:
    """The HTTP side shared by the three stand-ins: logs each request, asks ``answer`` for the response."""

    def __init__(self, script: list[Step] | tuple[Step, ...] = ()) -> None:
        self.script: list[Step] = list(script)
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw[:2000].decode("latin-1")}
                secret = ("authorization", "x-goog-api-key", "api-key")
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in secret}
                with model.lock:
                    model.requests.append({"path": self.path, "headers": headers, "body": body})
                status, content_type, data = model.answer(self.path, body)
                self._send(status, content_type, data)

            def do_GET(self) -> None:
                with model.lock:
                    model.requests.append({"path": self.path, "headers": {}, "body": None})
                status, content_type, data = model.answer_get(self.path)
                self._send(status, content_type, data)

            def _send(self, status: int, content_type: str, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True  # never wait for a connection a CLI left open
        self.server.block_on_close = False
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def __enter__(self) -> StandIn:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, script: list[Step] | tuple[Step, ...] = ()) -> None:
        """A new script and an empty log, for the next run of the CLI."""
        with self.lock:
            self.script = list(script)
            self.requests.clear()

    def step(self, done: int) -> Step:
        return self.script[done] if done < len(self.script) else say(DONE)

    # per API
    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        raise NotImplementedError

    def answer_get(self, path: str) -> tuple[int, str, bytes]:
        return 404, "application/json", b'{"error": "not here"}'

    def turns(self) -> list[dict]:
        """The bodies of the main loop's requests, in order."""
        raise NotImplementedError

    def sent(self) -> list[str]:
        return [json.dumps(body, ensure_ascii=False) for body in self.turns()]


# --- Codex: OpenAI Responses API (POST /v1/responses, SSE) ---------------------------------------------


def _sse_event(event: str, data: dict) -> str:
    return f"event: {event}\ndata: {json.dumps({'type': event, **data})}\n\n"


def apply_patch_text(path: str, old: str, new: str) -> str:
    lines = [f"-{line}" for line in old.splitlines()] + [f"+{line}" for line in new.splitlines()]
    return "*** Begin Patch\n*** Update File: " + path + "\n@@\n" + "\n".join(lines) + "\n*** End Patch\n"


class CodexStandIn(StandIn):
    """``codex exec`` against POST /v1/responses. Every request is a main-loop turn (a compaction request,
    ``x-codex-turn-metadata`` request_kind "compaction", is logged and answered with text like any other)."""

    counter = 0

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if not path.rstrip("/").endswith("/responses"):
            return 404, "application/json", b'{"error": "only /v1/responses here"}'
        items = body.get("input") or []
        done = sum(1 for item in items if item.get("type") in ("function_call_output", "custom_tool_call_output"))
        step = self.step(done)
        with self.lock:
            CodexStandIn.counter += 1
            rid = f"resp_{self.port}_{CodexStandIn.counter}"
        call_id = f"call_{rid}"
        if step.kind == "say":
            item = {
                "type": "message",
                "id": f"msg_{rid}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": step.args["text"], "annotations": []}],
            }
            events = [
                ("response.output_item.added", {"output_index": 0, "item": {**item, "content": []}}),
                (
                    "response.output_text.delta",
                    {"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": step.args["text"]},
                ),
                ("response.output_item.done", {"output_index": 0, "item": item}),
            ]
        else:
            if step.kind == "edit":
                item = {
                    "type": "custom_tool_call",
                    "id": f"ctc_{rid}",
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": apply_patch_text(step.args["path"], step.args["old"], step.args["new"]),
                    "status": "completed",
                }
            else:
                command = step.args["command"]
                item = {
                    "type": "function_call",
                    "id": f"fc_{rid}",
                    "call_id": call_id,
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": command}),
                    "status": "completed",
                }
            events = [
                ("response.output_item.added", {"output_index": 0, "item": item}),
                ("response.output_item.done", {"output_index": 0, "item": item}),
            ]
        usage = {
            "input_tokens": 40,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 50,
        }
        stream = [("response.created", {"response": {"id": rid, "status": "in_progress"}}), *events]
        completed = {"id": rid, "status": "completed", "usage": usage, "output": []}
        stream.append(("response.completed", {"response": completed}))
        return 200, "text/event-stream", "".join(_sse_event(e, d) for e, d in stream).encode()

    def turns(self) -> list[dict]:
        return [r["body"] for r in list(self.requests) if r["path"].rstrip("/").endswith("/responses")]


def codex_env(home: Path, port: int, project: Path, *, model: str = CODEX_MODEL) -> dict[str, str]:
    """HOME and CODEX_HOME (HOME/.codex) with a config.toml pointing Codex at the stand-in on ``port``,
    approvals off, no sandbox, and ``project`` trusted (its .codex/ hooks and config are then read)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{model}"\n'
        'model_provider = "standin"\n'
        'approval_policy = "never"\n'
        'sandbox_mode = "danger-full-access"\n'
        "\n[model_providers.standin]\n"
        'name = "standin"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n'
        'env_key = "STANDIN_API_KEY"\n'
        'wire_api = "responses"\n'
        f"\n[projects.{json.dumps(str(project))}]\n"
        'trust_level = "trusted"\n'
        "\n[features]\n"
        "plugins = false\n"  # else it syncs OpenAI's curated plugins from github.com at start-up
    )
    return {**base_env(home), "CODEX_HOME": str(codex_home), "STANDIN_API_KEY": "not-a-key"}


def codex_command(prompt: str) -> list[str]:
    # without --dangerously-bypass-hook-trust `codex exec` silently skips unreviewed project hooks
    return ["codex", "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "--color", "never", prompt]


# --- Gemini: streamGenerateContent (SSE) and the router's generateContent ------------------------------


class GeminiStandIn(StandIn):
    """``gemini -p`` against POST /v1beta/models/<model>:streamGenerateContent?alt=sse (the main loop) and
    :generateContent (the model router's classifier, JSON mode: answered with a low complexity score)."""

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if ":countTokens" in path:
            return 200, "application/json", b'{"totalTokens": 10}'
        config = body.get("generationConfig") or {}
        if ":generateContent" in path or config.get("responseMimeType") == "application/json":
            # the router's classifier (and any other JSON-mode call): a simple task, the user speaks next
            text = json.dumps({"reasoning": "stand-in", "complexity_reasoning": "simple", "complexity_score": 1,
                               "model_choice": "flash", "next_speaker": "user"})
            part: dict = {"text": text}
        else:
            done = sum(1 for c in body.get("contents") or [] for p in c.get("parts") or [] if "functionResponse" in p)
            step = self.step(done)
            if step.kind == "say":
                part = {"text": step.args["text"]}
            elif step.kind == "read":
                part = {"functionCall": {"name": "read_file", "args": {"file_path": step.args["path"]}}}
            elif step.kind == "edit":
                args = {
                    "file_path": step.args["path"],
                    "old_string": step.args["old"],
                    "new_string": step.args["new"],
                    "instruction": "Apply the change.",
                }
                part = {"functionCall": {"name": "replace", "args": args}}
            else:
                args = {"command": step.args["command"], "description": "Run the command."}
                part = {"functionCall": {"name": "run_shell_command", "args": args}}
        response = {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": "gemini-2.5-flash",
        }
        if ":streamGenerateContent" in path:
            return 200, "text/event-stream", b"data: " + json.dumps(response).encode() + b"\r\n\r\n"
        return 200, "application/json", json.dumps(response).encode()

    def answer_get(self, path: str) -> tuple[int, str, bytes]:
        return 200, "application/json", b'{"models": []}'

    def turns(self) -> list[dict]:
        return [r["body"] for r in list(self.requests) if ":streamGenerateContent" in r["path"]]


def gemini_env(home: Path, port: int) -> dict[str, str]:
    """HOME with ~/.gemini/settings.json selecting API-key auth (no update checks, no telemetry), the
    key and the base URL the bundled SDK reads, and the workspace trusted (headless mode exits with 55
    in an untrusted folder)."""
    gemini_home = home / ".gemini"
    gemini_home.mkdir(parents=True, exist_ok=True)
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (gemini_home / "settings.json").write_text(json.dumps(settings, indent=2))
    return {
        **base_env(home),
        "GEMINI_API_KEY": "not-a-key",
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def gemini_command(prompt: str) -> list[str]:
    # --yolo: without it headless mode offers neither replace/write_file nor run_shell_command to the model
    return ["gemini", "-p", prompt, "--skip-trust", "--yolo"]


# --- Copilot: OpenAI chat completions (POST /v1/chat/completions, streaming) ---------------------------


class CopilotStandIn(StandIn):
    """``copilot -p`` (BYOK, offline) against POST /v1/chat/completions. The main loop's requests are the
    ones offering the ``bash`` tool."""

    counter = 0

    def answer(self, path: str, body: dict) -> tuple[int, str, bytes]:
        if not path.rstrip("/").endswith("/chat/completions"):
            return 404, "application/json", b'{"error": {"message": "only chat/completions here"}}'
        tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
        done = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
        step = self.step(done) if "bash" in tools else say(DONE)
        with self.lock:
            CopilotStandIn.counter += 1
            cid = f"chatcmpl-{self.port}-{CopilotStandIn.counter}"
        call = None
        if step.kind == "read":
            call = ("view", {"path": step.args["path"]})
        elif step.kind == "edit":
            call = ("edit", {"path": step.args["path"], "old_str": step.args["old"], "new_str": step.args["new"]})
        elif step.kind == "shell":
            call = ("bash", {"command": step.args["command"], "description": "Run the command", "mode": "sync"})
        model = body.get("model", COPILOT_MODEL)
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        if call:
            function = {"name": call[0], "arguments": json.dumps(call[1])}
            tool_call = {"id": f"call_{cid}", "type": "function", "function": function}
            message: dict = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": step.args["text"]}, "stop"
        if not body.get("stream"):
            response = {
                "id": cid,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
            return 200, "application/json", json.dumps(response).encode()

        def chunk(delta: dict, finish_reason: str | None = None, with_usage: bool = False) -> str:
            data: dict = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
            if with_usage:
                data["usage"] = usage
            return f"data: {json.dumps(data)}\n\n"

        if call:
            delta = {"role": "assistant", "content": None, "tool_calls": [{"index": 0, **message["tool_calls"][0]}]}
        else:
            delta = {"role": "assistant", "content": message["content"]}
        data = chunk(delta) + chunk({}, finish, with_usage=True) + "data: [DONE]\n\n"
        return 200, "text/event-stream", data.encode()

    def answer_get(self, path: str) -> tuple[int, str, bytes]:
        if path.rstrip("/").endswith("/models"):
            models = {"object": "list", "data": [{"id": COPILOT_MODEL, "object": "model", "owned_by": "standin"}]}
            return 200, "application/json", json.dumps(models).encode()
        return 404, "application/json", b'{"error": "not here"}'

    def turns(self) -> list[dict]:
        return [
            r["body"]
            for r in list(self.requests)
            if r["body"] and "bash" in [t.get("function", {}).get("name") for t in r["body"].get("tools") or []]
        ]


def copilot_pkg_cache() -> Path:
    """Where Copilot's loader unpacks its runtime (~235 MB, about 2 s a run) on a first run: the real
    user's cache (~/.cache/copilot, where `copilot` keeps it anyway), shared by every test instead of
    once per fresh HOME. COPILOT_PKG_CACHE_HOME/pkg is looked at and written before ~/.cache/copilot/pkg
    and, unlike COPILOT_CACHE_HOME, moves nothing else (the MCP tool-list cache stays under the test's HOME)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "copilot"


def copilot_env(home: Path, port: int) -> dict[str, str]:
    """HOME and COPILOT_HOME (HOME/.copilot), offline BYOK against the stand-in on ``port``: no GitHub
    login, telemetry, GitHub MCP server or auto-update; the runtime shared (``copilot_pkg_cache``)."""
    copilot_home = home / ".copilot"
    copilot_home.mkdir(parents=True, exist_ok=True)
    return {
        **base_env(home),
        "COPILOT_HOME": str(copilot_home),
        "COPILOT_PKG_CACHE_HOME": str(copilot_pkg_cache()),
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_PROVIDER_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "COPILOT_PROVIDER_API_KEY": "not-a-key",
        "COPILOT_MODEL": COPILOT_MODEL,
    }


def copilot_command(prompt: str) -> list[str]:
    # --trust-folder: in -p mode repository hooks (.github/hooks) and .mcp.json load only in a trusted folder
    return ["copilot", "-p", prompt, "--allow-all", "--trust-folder", "--no-auto-update"]


# --- common ---------------------------------------------------------------------------------------------


AGENTS = {
    "codex": (CodexStandIn, "codex"),
    "gemini": (GeminiStandIn, "gemini"),
    "copilot": (CopilotStandIn, "copilot"),
}


def agent_env(agent: str, home: Path, port: int, project: Path) -> dict[str, str]:
    """The environment to run ``agent`` in ``project`` against a stand-in on ``port`` (see the *_env helpers)."""
    if agent == "codex":
        return codex_env(home, port, project)
    return {"gemini": gemini_env, "copilot": copilot_env}[agent](home, port)


def agent_command(agent: str, prompt: str) -> list[str]:
    return {"codex": codex_command, "gemini": gemini_command, "copilot": copilot_command}[agent](prompt)


# The versions run (scripts/install-test-extras.sh installs exactly these; docs/agents/ describes them).
PINNED = {"codex": "0.171.0", "gemini": "0.61.0", "copilot": "1.0.102"}


def installed(agent: str) -> bool:
    return shutil.which(AGENTS[agent][1]) is not None


@functools.cache
def version_problem(agent: str) -> str | None:
    """Why ``agent`` cannot be tested here: not installed, or not the pinned version (its hook
    payloads and outputs may differ); None when it can."""
    command = shutil.which(AGENTS[agent][1])
    if command is None:
        return f"`{agent}` is not installed (scripts/install-test-extras.sh installs {agent} {PINNED[agent]})"
    try:
        out = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=60,
                             env={**os.environ, "COPILOT_OFFLINE": "true", "NO_UPDATE_NOTIFIER": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{agent} --version` failed: {exc}"
    found = re.search(r"\d+\.\d+\.\d+", out.stdout + out.stderr)
    if found is None or found.group(0) != PINNED[agent]:
        return f"`{agent}` is {found.group(0) if found else 'of an unknown version'}, not the pinned {PINNED[agent]}"
    return None


def transcripts(agent: str, home: Path) -> list[Path]:
    """The transcript files a run of ``agent`` under ``home`` wrote (the paths its hooks are given)."""
    pattern = {
        "codex": (".codex/sessions", "**/rollout-*.jsonl"),
        "gemini": (".gemini/tmp", "*/chats/session-*.jsonl"),
        "copilot": (".copilot/session-state", "*/events.jsonl"),
    }[agent]
    root = home / pattern[0]
    return sorted(root.glob(pattern[1])) if root.is_dir() else []
