"""What tells the agent how far to trust a node (issues 29 and 38), side by side:

- :mod:`.staleness`: has the code a node talks about moved on since the node was written or reviewed?
  (git history, the working tree and the node's fingerprint of the code it saw); the rule's entry,
  with its parts beside it: :mod:`.git_history` (git, read once), :mod:`.mentions` (what a node's text
  names and states), :mod:`.fingerprints` (the code a node saw), :mod:`.symbol_rules` (a ``#symbol``
  and a ``#L`` span judged), :mod:`.defects` (a node that describes a defect, and the change that may fix
  it), :mod:`.protocols` (the special methods behind the operations a node writes as code),
  :mod:`.deprecations` (what is deprecated in another module or under a folder) and :mod:`.findings`
  (a judged reference, and how a flag names its commit);
- :mod:`.code_compare`: code compared with formatting, comments and whitespace aside, for staleness;
  :mod:`.equivalents`: a linter's equivalent rewrites read one way before a symbol is compared;
  :mod:`.denials`: the names a node says the code has not; :mod:`.folder_files`: what a folder holds
  (the files a folder node names by bare name, the names its files hold or define);
- :mod:`.untrusted`: every string from the repository quoted as data, and the check that holds back a
  node whose text addresses the agent with instructions until a person reviews it;
- :mod:`.textnorm`: text made plain for that check (look-alike letters, invisible characters, HTML
  comments, base64).
"""
