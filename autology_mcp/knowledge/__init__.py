"""The knowledge graph (seed 004): nodes and relations as Markdown files in ``.autology/nodes/``.

``models`` (the node model and validation rules) → ``markdown`` (node ⇄ file text) → ``store`` (files,
lock, reconcile, the SQLite cache in ``node_index``, the relation index in ``graph``) → ``search``
(ranked node search) and ``graph_ops`` (traversals) → ``service`` (``Autology``: the seven
operations). ``classify``, ``adr`` and ``references`` are rules the service applies; ``analyze``,
``doctor`` and ``export`` read the store; ``watch`` follows outside edits. Nothing here imports MCP.
"""
