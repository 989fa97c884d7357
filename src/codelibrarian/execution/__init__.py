"""The workflow engine: runs compiled technique compositions step by step.

The engine core decides (pure); the shell dispatches steps, keeps the journal and the
hash-chained evidence ledger, and reads the clock. See ``docs/execution.md``.
"""
