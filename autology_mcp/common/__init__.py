"""What every part of autology shares: project paths, atomic file writes and the lock, the typed
errors, and the ``[tool.autology]`` settings. Nothing here imports another part of autology."""
