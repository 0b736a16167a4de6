"""Fixtures of the repository index tests (helpers live in code_fixtures.py)."""

from code_fixtures import plain_dir, repo  # noqa: F401  (pytest fixtures)
