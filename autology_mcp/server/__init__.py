"""The MCP edge: the server that registers autology's tools, prompts and resources over the core.

One module per tool group, each a set of thin wrappers that call the core and turn its typed errors
into ``ToolError``: ``nodes`` (the seven seed-004 tools), ``graph`` (graph walks, health report),
``code`` (the code index), ``retrieval`` (unified search, context bundle, claim check), ``prompts``
and ``resources``. ``app`` assembles them (``build_server``) and runs them on stdio (``serve``);
``schemas`` adjusts what the SDK publishes and accepts. Nothing here prints to stdout: on the stdio
transport, stdout is the protocol.
"""
