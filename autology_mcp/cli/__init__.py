"""The ``autology`` command line: ``main`` (in :mod:`autology_mcp.cli.main`) and one module per command group."""
