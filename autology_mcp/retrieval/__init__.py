"""Unified retrieval: one always-on search over knowledge nodes, code, docs and past sessions.

Modules, one job each:

- ``options``    what a search may be asked for (scopes, detail levels, limits)
- ``config``     settings of ``[tool.autology.retrieval]``
- ``intent``     deterministic intent heuristics that weight the channels
- ``candidates`` the candidate record shared by the stages
- ``channels``   the retrieval channels (nodes, code/docs via the code index, sessions)
- ``fusion``     RRF, MMR, location similarity
- ``expand``     graph expansion: neighbours, supersession, code -> referencing nodes
- ``scoring``    priority, similarity, keyword and the final blend
- ``verdict``    grounded / weak / ambiguous / no_evidence, clarifying question, guidance
- ``cards``      each hit as an evidence card on its proof lines
- ``budget``     token counting and output throttling
- ``engine``     :func:`~autology_mcp.retrieval.engine.search`, the pipeline
- ``bundle``     :func:`~autology_mcp.retrieval.bundle.context`, the ``autology_bundle_v1`` bundle
- ``claims``     the claim check; ``ledger`` the verdict and claim counters

No MCP imports: the tools are ``autology_mcp/server/retrieval.py``, the commands
``autology_mcp/cli/search.py``. See docs/retrieval.md.
"""
