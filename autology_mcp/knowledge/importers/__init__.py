"""Importers: what other tools wrote, turned into nodes (issue 22). Each reads one format and plans
before it writes; a second run changes only what changed (:mod:`.common`'s provenance key).

- :mod:`.adr`: an ADR folder (Nygard, adr-tools, MADR) into decision nodes;
- :mod:`.memory`: the official memory server's ``memory.jsonl`` into nodes and relations;
- :mod:`.claude_md`: a CLAUDE.md, or a folder of Markdown memory files, into conventions and concepts;
- :mod:`.basic_memory`: a basic-memory project's notes into nodes and relations.
"""
