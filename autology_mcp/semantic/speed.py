"""Is the model fast enough for a hook now? A running measure of real query embeddings (issue 40).

A hook answered by the server has a latency budget; the model may spend at most :data:`HOOK_QUERY_MS` of it
embedding the question. Every question a process embeds is timed, and the hooks use the vectors while the
median of the last :data:`WINDOW` timings is within the budget. One slow embedding (a busy machine while the
server starts, another process's build) moves the median by nothing; a machine that stays busy moves it
over, and the hooks rank by words until it comes back.

While the hooks rank by words the measure does not stop: a hook's question is embedded again off its
critical path (:meth:`QuerySpeed.probe`: in a thread, after :data:`PROBE_DELAY_S`, when the hook has
answered; at most one every :data:`PROBE_EVERY_S`), its vector thrown away and its time recorded. So the
hooks go back to the vectors once embeddings are within budget again, and a model that is slow on this
machine costs one embedding every few seconds of hook traffic, never a hook's time.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable

# A hook answered by the server stays within about 3x the bare interpreter with lexical ranking plus this
# (all-MiniLM-L6-v2 embeds a question in ~5 ms here, nomic-embed-text-v1.5 in ~70: docs/benchmarks.md).
HOOK_QUERY_MS = 30.0
WINDOW = 5  # the last timings the median is taken over
PROBE_EVERY_S = 2.0  # at most one probe this often, while the hooks rank by words
PROBE_DELAY_S = 0.25  # a probe waits this long: the hook that asked has answered by then


class QuerySpeed:
    """The timings of one loaded model's query embeddings, and what they decide for the hooks."""

    def __init__(self, budget_ms: float = HOOK_QUERY_MS, window: int = WINDOW,
                 clock: Callable[[], float] = time.monotonic):
        self.budget_ms = budget_ms
        self.clock = clock  # when probes ran (seconds); the timings themselves are given to record()
        self._times: deque[float] = deque(maxlen=window)
        self._lock = threading.Lock()
        self._last_probe = float("-inf")
        self.probing: threading.Thread | None = None  # the probe running now, if any (tests join it)
        self.measured = 0  # timings recorded in all
        self.listener: Callable[[], None] | None = None  # called when the hooks' choice switches

    def record(self, ms: float) -> None:
        before = self.fast_enough()
        with self._lock:
            self._times.append(float(ms))
            self.measured += 1
        if self.listener is not None and self.fast_enough() != before:
            self.listener()

    def median(self) -> float | None:
        with self._lock:
            return statistics.median(self._times) if self._times else None

    def fast_enough(self) -> bool:
        """Whether a hook may embed its question now."""
        median = self.median()
        return median is not None and median <= self.budget_ms

    def probe(self, embed: Callable[[], object]) -> bool:
        """Run ``embed`` (which records its own time) in a thread after :data:`PROBE_DELAY_S`, unless a probe
        runs already or ran less than :data:`PROBE_EVERY_S` ago; whether one was started."""
        with self._lock:
            now = self.clock()
            if (self.probing is not None and self.probing.is_alive()) or now - self._last_probe < PROBE_EVERY_S:
                return False
            self._last_probe = now

            def run() -> None:
                time.sleep(PROBE_DELAY_S)
                try:
                    embed()
                except Exception:  # noqa: BLE001 - a failed probe measures nothing; the hooks stay lexical
                    pass

            self.probing = threading.Thread(target=run, name="autology-semantic-probe", daemon=True)
            self.probing.start()
            return True

    def report(self) -> dict:
        """What status says: whether the hooks embed their questions now, the median and why not."""
        median = self.median()
        with self._lock:
            samples = len(self._times)
        out = {"use_vectors": median is not None and median <= self.budget_ms, "budget_ms": self.budget_ms,
               "query_ms": None if median is None else round(median, 1), "samples": samples}
        if median is None:
            out["why"] = "no question embedded yet"
        elif not out["use_vectors"]:
            out["why"] = (f"the model embeds a question in {median:.0f} ms here (median of the last {samples}), over "
                          f"the hooks' {self.budget_ms:.0f} ms budget: they rank by words and measure again now and then")
        return out
