"""Fixtures of the repository index tests (helpers live in repo_fixtures.py)."""

from repo_fixtures import plain_dir, repo  # noqa: F401  (pytest fixtures)
