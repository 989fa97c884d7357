"""The imperative shell around the pure composer and the index.

``codelibrarian.api.Librarian`` is a thin facade over these modules:

* :mod:`.workspace` — one open workspace: config, ``.librarian/`` state, the index
  connection, the git-status signature that decides when to re-index, the current
  change, git recency and the per-generation memo the sources share.
* :mod:`.compose` — the compose orchestration: gather candidates from the sources,
  apply the policy engine, shape the lane budget, run the pure composer, record the
  decision and its private replay inputs, explain and replay.
* :mod:`.query` — the query pipeline over the open index, with cited code.
* :mod:`.inspect` — read-only views: index status, workspace scan, token counts,
  the repository map, ``init``.
* :mod:`.doctor` — installation and repository checks.

Nothing here prints or exits; errors are :mod:`codelibrarian.errors` types.
"""
