"""History as memory (issue 41): the repository's own commits, searchable by what they say, touched and changed.

``log`` reads commits from git, ``text`` decides what of a commit is text and whose commit it is,
``index`` keeps the searchable index in step with HEAD, ``config`` holds ``[tool.autology.history]``.
"""
