"""What the benchmark scripts share: one place, imported by every script that needs it.

* :mod:`harness.procs` — whole processes: wall time of a command, a "side" run in a
  fresh interpreter with a chosen ``src/`` first on ``PYTHONPATH`` (an A/B of two
  checkouts in the same minutes), CPU and peak memory of a process tree, environments
  with an empty per-user cache and no resident server;
* :mod:`harness.sides` — the programs a side runs (warm compositions, the packs
  comparison, the edit loop); it imports only ``codelibrarian`` and the standard library;
* :mod:`harness.corpus` — repositories to measure on: ``git`` in a folder, the standard
  library's ``.py`` files as a git repository, clones, task sentences from folder names;
* :mod:`harness.stats` — medians, percentiles, Markdown tables, the machine line;
* :mod:`harness.ctxbench` — the history-mined context benchmark (``ctxbench.md``): its
  harness's scoring functions, per-snapshot index copies, packs read back by block;
* :mod:`harness.spans` and :mod:`harness.history` — what the span probes of
  ``benchmarks/lab/`` share: a gold file's ranked spans and the definitions past
  commits edited;
* :mod:`harness.bundled` — the write-or-check command line of the scripts that generate
  files the library ships (``intents/export_*.py``).

A script in ``benchmarks/`` imports it as ``harness`` (the script's folder is first on
``sys.path``); a script in ``benchmarks/lab/`` puts ``benchmarks/`` there first.
"""
