"""What a unified search may be asked for: the request options the engine validates, kept apart
from it so that the CLI can build its parser without importing the search engine."""

SCOPES = ("nodes", "code", "docs", "sessions", "history")
DETAILS = ("brief", "normal", "full")
LIMIT_MAX = 50
QUERY_MAX = 2000
