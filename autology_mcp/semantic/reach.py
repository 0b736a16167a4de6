"""Can the host a model is downloaded from be reached? Asked before ``autology semantic enable NAME``
downloads, so that a machine offline hears it at once (fastembed would retry for about 40 s, sleeping
3, 9 and 27 s) and is pointed to ``--path``.

One HEAD request, answered within :data:`TIMEOUT_S` (name resolution, connection, TLS and the answer:
the attempt runs in a thread), to the host, or through the proxy the environment names for it
(``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, unless ``NO_PROXY`` covers the host: what the download's HTTP client does
too). Any HTTP answer means the host is there; a connection alone does not (a network that accepts every
connection and answers none exists). Standard library only.
"""

from __future__ import annotations

import os
import threading
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

TIMEOUT_S = 2.5
HF_ENDPOINT = "https://huggingface.co"  # where fastembed's models come from (huggingface_hub's default)


def model_host() -> str:
    """The address the hub's downloads go to (``HF_ENDPOINT`` when set, as huggingface_hub reads it)."""
    return (os.environ.get("HF_ENDPOINT") or HF_ENDPOINT).rstrip("/")


def target(url: str) -> tuple[str, int, str | None]:
    """(host, port, proxy) a connection for ``url`` goes to: its own host, or the proxy the environment
    names for its scheme (``proxy`` is then that proxy's address, for the message)."""
    parts = urlsplit(url)
    host, scheme = parts.hostname or "", parts.scheme or "https"
    port = parts.port or (443 if scheme == "https" else 80)
    proxies = getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if proxy and not proxy_bypass(host):
        given = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        default = {"https": 443, "socks5": 1080, "socks5h": 1080, "socks4": 1080}.get(given.scheme, 80)
        return given.hostname or "", given.port or default, proxy
    return host, port, None


def unreachable(url: str, timeout: float = TIMEOUT_S) -> str | None:
    """Why ``url``'s host (or its proxy) does not answer now, in a few words; None when it does (any HTTP
    answer counts, an error status too: the host is there)."""
    import urllib.error
    import urllib.request

    host, port, proxy = target(url)
    if proxy and not proxy.lower().startswith(("http://", "https://")) and "://" in proxy:
        return None  # a SOCKS proxy: not one the standard library speaks, so the download is left to tell
    through = f" through the proxy {host}:{port}" if proxy else ""  # its address only: never its password
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({urlsplit(url).scheme: proxy} if proxy else {}))
    outcome: dict[str, object] = {}

    def attempt() -> None:
        try:
            opener.open(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
            outcome["ok"] = True
        except urllib.error.HTTPError:
            outcome["ok"] = True  # it answered
        except (OSError, ValueError) as exc:  # URLError is an OSError; a bad proxy address a ValueError
            reason = getattr(exc, "reason", exc)
            if not isinstance(reason, TimeoutError):  # a timeout is said as one, below
                outcome["error"] = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__

    thread = threading.Thread(target=attempt, name="autology-reach", daemon=True)
    thread.start()
    thread.join(timeout + 0.1)
    if outcome.get("ok"):
        return None
    return f"cannot reach {urlsplit(url).hostname}{through} ({outcome.get('error') or f'no answer within {timeout:g} s'})"
