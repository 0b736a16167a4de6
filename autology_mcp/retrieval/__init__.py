"""Unified retrieval (issue 6): one always-on search over knowledge nodes, code, docs and sessions.

Modules, one job each:

- ``config``     settings of ``[tool.autology.retrieval]``
- ``intent``     deterministic intent heuristics that weight the channels
- ``text``       query terms, keyword coverage, proof spans
- ``candidates`` the candidate record shared by the stages
- ``channels``   the retrieval channels (nodes, code/docs via the repository index, sessions)
- ``fusion``     RRF, MMR, location similarity
- ``expand``     graph expansion: neighbours, supersession, code -> referencing nodes
- ``scoring``    priority, similarity, keyword and the final blend
- ``verdict``    grounded / weak / ambiguous / no_evidence, clarifying question, guidance
- ``budget``     token counting and output throttling
- ``engine``     :func:`search`, the pipeline
- ``bundle``     :func:`context`, the ``autology_bundle_v1`` context bundle
- ``tools``      the MCP tools (thin wrappers); ``cli`` the ``autology search|context`` commands

No MCP imports outside ``tools``. See docs/retrieval.md.
"""

from autology_mcp.retrieval.engine import search

__all__ = ["search"]
