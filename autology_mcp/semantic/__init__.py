"""Semantic recall, an optional extra (issue 31): dense vectors of the memory's texts, fused with the
lexical ranking where words differ. Off by default and on a machine only after ``autology semantic
enable`` (:mod:`~autology_mcp.semantic.state`); the model is loaded through the extra
(:mod:`~autology_mcp.semantic.encoder`), the vectors are a derived cache
(:mod:`~autology_mcp.semantic.vectors`), and :mod:`~autology_mcp.semantic.runtime` is what the other
parts ask. Without the extra, or off, nothing here is imported by a search."""
