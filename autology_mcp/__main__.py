from autology_mcp.cli.main import main

raise SystemExit(main())
