"""Context packs: the sliding WindowComposer (``window``) and Local Context Packs."""
