"""The hook service: a running ``autology serve`` answers the per-prompt and per-file hooks over a Unix
socket; the hook process asks it first and runs in-process whenever it cannot (real server processes,
real sockets)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from autology_mcp.hooks import client, service
from autology_mcp.hooks.service import HookService, socket_dir
from autology_mcp.knowledge.lease import live_leases
from autology_mcp.knowledge.service import Autology

ADR = "## Context\nC.\n\n## Decision\nReconnect the websocket with exponential backoff.\n\n## Alternatives\nA.\n\n## Consequences\nX."


@pytest.fixture(autouse=True)
def _private_runtime_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    for name in ("AUTOLOGY_ROOT", "CLAUDE_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    service_ = Autology.open(root)
    service_.capture("Reconnect the websocket with exponential backoff", ADR, type="decision")
    service_.close()
    return root


class Server:
    """``autology serve`` on stdio for the duration of a ``with`` block; ready once it advertises its socket."""

    def __init__(self, root: Path):
        self.root = root

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "autology_mcp", "--root", str(self.root), "serve"],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not [a for a in live_leases(self.root / ".autology" / "cache") if a]:
            assert self.proc.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server never advertised its hook service"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=20)


def hook(event: str, payload: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autology_mcp.hooks", event], input=json.dumps(payload), capture_output=True, text=True,
        env={**os.environ, "AUTOLOGY_HOOK_DEBUG": "1"},
    )


def prompt(root: Path, session: str) -> dict:
    return {"session_id": session, "cwd": str(root), "prompt": "How do we reconnect the websocket with backoff?"}


def test_the_running_server_answers_exactly_as_the_hook_would(project: Path) -> None:
    alone = hook("user-prompt-submit", prompt(project, "alone"))
    assert "answered by the running server" not in alone.stderr
    with Server(project):
        served = hook("user-prompt-submit", prompt(project, "served"))
    assert served.returncode == 0 and "answered by the running server" in served.stderr
    assert json.loads(served.stdout) == json.loads(alone.stdout)  # the same block, from the same handler
    assert "Reconnect the websocket with exponential backoff" in served.stdout


def test_a_hook_the_server_answers_imports_only_what_asking_needs(project: Path) -> None:
    """The hook process of a served event is the floor plus a socket (bench/hooks.py): none of the engine,
    and not even typing."""
    run = ("import json, runpy, sys\nsys.argv = ['hooks', 'user-prompt-submit']\ntry:\n"
           "    runpy.run_module('autology_mcp.hooks', run_name='__main__')\nexcept SystemExit:\n    pass\n"
           "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n")
    with Server(project):
        out = subprocess.run([sys.executable, "-c", run], input=json.dumps(prompt(project, "imports")),
                             capture_output=True, text=True, env={**os.environ, "AUTOLOGY_HOOK_DEBUG": "1"})
    assert "answered by the running server" in out.stderr and "exponential backoff" in out.stdout
    modules = json.loads(out.stderr.rsplit("MODULES ", 1)[1])
    ours = {m for m in modules if m.startswith("autology_mcp")}
    assert ours <= {"autology_mcp", "autology_mcp.hooks", "autology_mcp.hooks.__main__", "autology_mcp.hooks.client",
                    "autology_mcp.hooks.dialects", "autology_mcp.knowledge", "autology_mcp.knowledge.lease"}, ours
    assert "typing" not in modules and "sqlite3" not in modules


def test_after_the_server_is_gone_hooks_run_in_process(project: Path) -> None:
    server = Server(project).__enter__()
    (socket_path,) = [a for a in live_leases(project / ".autology" / "cache") if a]
    server.proc.send_signal(signal.SIGKILL)
    server.proc.wait(timeout=10)
    assert Path(socket_path).exists()  # a killed server leaves its socket behind
    out = hook("user-prompt-submit", prompt(project, "after"))
    assert "answered by the running server" not in out.stderr and "exponential backoff" in out.stdout
    with Server(project):  # the next server removes the dead socket
        assert not Path(socket_path).exists()


def test_only_its_own_projects_served_events_are_answered(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    Autology.open(other).close()
    own = HookService(project)
    stdin = json.dumps(prompt(project, "x"))
    assert own.answer("user-prompt-submit", stdin, None)["served"] is True
    assert own.answer("user-prompt-submit", json.dumps(prompt(other, "x")), None) == {"served": False}
    assert own.answer("user-prompt-submit", stdin, str(other)) == {"served": False}  # the hook's root wins
    assert own.answer("pre-compact", json.dumps({"cwd": str(project)}), None) == {"served": False}
    assert own.answer("user-prompt-submit", "not json", None) == {"served": False}


def test_a_server_that_does_not_answer_in_time_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "run" / "silent.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    monkeypatch.setattr(client, "TIMEOUT_S", 0.3)
    started = time.monotonic()
    assert client._ask(path, "user-prompt-submit", "{}", None) == (False, None)
    assert time.monotonic() - started < 3
    listener.close()


def test_the_socket_folder_must_be_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    (shared / "autology").mkdir(parents=True)
    os.chmod(shared / "autology", 0o755)  # others could read it
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    assert socket_dir() is None
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "autology").symlink_to(tmp_path / "run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(linked))
    assert socket_dir() is None
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    folder = socket_dir()
    assert folder is not None and (os.stat(folder).st_mode & 0o777) == 0o700
    running = HookService(tmp_path)
    assert running.start() is not None  # and the service then runs
    running.stop()
    assert service.SERVED == ("user-prompt-submit", "post-read", "pre-tool-use", "session-start")


def cli(root: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autology_mcp", "--root", str(root), *argv], capture_output=True,
                          text=True, env={**os.environ, "AUTOLOGY_HOOK_DEBUG": "1"}, timeout=120)


def test_command_line_searches_are_answered_by_the_running_server(project: Path, tmp_path: Path) -> None:
    """Issue 40: `autology search` and `autology sessions search` ask the project's running server (warm, the
    model loaded once), and search in-process when there is none: the same answer either way."""
    transcript = tmp_path / "claude" / "projects" / "-p" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    turns = [("user", "How should the websocket reconnect?"),
             ("assistant", "We decided to reconnect with exponential backoff and jitter.")]
    transcript.write_text("".join(json.dumps({
        "type": role, "sessionId": "s1", "uuid": f"u{i}", "timestamp": f"2026-11-27T12:00:0{i}.000Z", "cwd": str(project),
        "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
    }) + "\n" for i, (role, text) in enumerate(turns)))
    assert cli(project, "sessions", "ingest", str(transcript)).returncode == 0
    alone = [cli(project, "search", "websocket", "reconnect", "--json"), cli(project, "sessions", "search", "reconnect", "--json")]
    for out in alone:
        assert out.returncode == 0 and "answered by the running server" not in out.stderr, out.stderr
    with Server(project):
        served = [cli(project, "search", "websocket", "reconnect", "--json"),
                  cli(project, "sessions", "search", "reconnect", "--json")]
        human = cli(project, "sessions", "search", "reconnect")
    for out in [*served, human]:
        assert out.returncode == 0 and "answered by the running server" in out.stderr, out.stderr
    searched, served_search = json.loads(alone[0].stdout), json.loads(served[0].stdout)
    assert [h["ref"] for h in served_search["hits"]] == [h["ref"] for h in searched["hits"]]
    assert served_search["verdict"] == searched["verdict"]
    assert "Reconnect the websocket with exponential backoff" in served[0].stdout
    assert json.loads(served[1].stdout) == json.loads(alone[1].stdout)
    assert json.loads(served[1].stdout)[0]["session_id"] == "s1" and "exponential backoff" in human.stdout
    elsewhere = tmp_path / "elsewhere"  # a server of another project never answers for this one
    Autology.open(elsewhere).close()
    with Server(project):
        other = cli(elsewhere, "search", "websocket", "--json")
    assert other.returncode == 0 and "answered by the running server" not in other.stderr
