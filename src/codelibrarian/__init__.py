"""codelibrarian: the right context for AI coding agents under a hard token budget."""

__version__ = "0.1.0"

__all__ = ["__version__"]
