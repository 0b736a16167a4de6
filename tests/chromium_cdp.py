"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe`` (no websockets, no npm).

Shared by tests/test_graph_html.py and bench/graph_html.py. Chromium reads commands on its fd 3 and
writes answers and events on its fd 4, each message one JSON object ended by a NUL byte.

    with Browser(1200, 800) as browser:
        page = browser.open(path.as_uri())
        page.wait_for("document.body.dataset.settled")
        page.evaluate("1 + 1")      # -> 2
        page.screenshot(png_path)
        page.errors()               # console errors, uncaught exceptions, failed requests
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with a fresh profile, spoken to over its debugging pipe."""

    def __init__(self, width: int = 1200, height: int = 800, extra_flags: tuple[str, ...] = ()):
        if CHROMIUM is None:
            raise CDPError("chromium is not installed")
        self.width, self.height = width, height
        self._profile = tempfile.TemporaryDirectory(prefix="autology-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # Move the child's ends above 9 first, so that dup2 onto 3 and 4 cannot clobber one another.
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD_CLOEXEC, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD_CLOEXEC, 10)
        for fd in (to_child_r, from_child_w):
            os.close(fd)

        def wire() -> None:  # runs in the child between fork and exec
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                *extra_flags,
                f"--user-data-dir={self._profile.name}",
                f"--window-size={width},{height}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=wire,
        )
        os.close(high_r)
        os.close(high_w)
        self._out = os.fdopen(to_child_w, "wb", buffering=0)
        self._in = os.fdopen(from_child_r, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    # -- the wire

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = self._in.read(1 << 16)
                if not chunk:
                    raise CDPError("chromium closed its debugging pipe")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 60):
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self._out.write(json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise CDPError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def pump(self, seconds: float) -> None:
        """Collect the events that arrive within ``seconds``."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                answer = self._read_message(deadline)
                if "method" in answer:
                    self.events.append(answer)
        except TimeoutError:
            pass

    # -- pages

    def open(self, url: str, width: int | None = None, height: int | None = None, timeout: float = 60) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width or self.width, "height": height or self.height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        self.send("Page.navigate", {"url": url}, session=session)
        page.wait_for("document.readyState === 'complete'", timeout=timeout)
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except (CDPError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self._out, self._in):
            f.close()
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Page:
    def __init__(self, browser: Browser, session: str):
        self.browser, self.session = browser, session

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60):
        return self.browser.send(method, params, session=self.session, timeout=timeout)

    def evaluate(self, expression: str, timeout: float = 600) -> Any:
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            raise CDPError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60, interval: float = 0.05) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout} s for {expression}")
            time.sleep(interval)

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        Path(path).write_bytes(base64.b64decode(data))
        return Path(path)

    def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        """kind: mouseMoved, mousePressed, mouseReleased, mouseWheel (then pass deltaX/deltaY)."""
        params = {"type": kind, "x": x, "y": y, **extra}
        if kind in ("mousePressed", "mouseReleased"):
            params.setdefault("button", "left")
            params.setdefault("clickCount", 1)
        self.send("Input.dispatchMouseEvent", params)

    def click(self, x: float, y: float) -> None:
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def type_text(self, text: str) -> None:
        self.send("Input.insertText", {"text": text})

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed requests seen on this page so far."""
        self.browser.pump(0.05)
        found = []
        for event in self.browser.events:
            if event.get("sessionId") != self.session:
                continue
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append("console: " + json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append("log: " + params["entry"].get("text", "")[:500])
            elif method == "Network.loadingFailed":
                found.append("request failed: " + json.dumps(params)[:300])
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for (Network.requestWillBeSent)."""
        self.browser.pump(0.05)
        return [
            e["params"]["request"]["url"]
            for e in self.browser.events
            if e.get("sessionId") == self.session and e["method"] == "Network.requestWillBeSent"
        ]
