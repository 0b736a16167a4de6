"""The code index (the repository index): scan, chunk, vectorize, store, query and verify the project's own code and docs.

Modules, one job each:

- ``config``   settings of ``[tool.autology.index]`` (defaults, validation, config hash)
- ``git``      the few git facts needed (files, HEAD, branch, dirty)
- ``scan``     which files are indexed
- ``chunking`` chunks and symbols per file (``ast`` for Python, heuristics otherwise, doc sections)
- ``vectors``  deterministic hashed vectors
- ``store``    the SQLite database (files, chunks, vectors, symbols, FTS5)
- ``layout``   where a namespace's index lives, atomic JSON, the build lock
- ``build``    incremental indexing
- ``query``    hybrid ranking
- ``verify``   integrity and drift
- ``export``   JSONL + vectors.f32 artifacts
- ``service``  plain functions the CLI (``autology_mcp.cli.index``) and the MCP tools call

The text analysis (normalization, tokens, stop words) is ``autology_mcp.common.text``'s ``code_*``.
No MCP imports here. See docs/repo-index.md.
"""
