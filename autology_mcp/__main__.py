from autology_mcp.cli import main

raise SystemExit(main())
