"""The repository index: scan, chunk, vectorize, store, query and verify the project's own code and docs.

Modules, one job each: ``config`` (settings), ``scan`` (which files), ``chunking`` (chunks and symbols),
``vectors`` (deterministic hashed vectors), ``store`` (the SQLite database), ``build`` (incremental
indexing), ``query`` (hybrid ranking), ``verify`` (integrity and drift), ``export`` (JSONL artifacts),
``service`` (plain functions the MCP tools call) and ``cli`` (the ``autology index`` commands).
No MCP imports here.
"""
