"""The ``librarian`` command line: a thin shell over :mod:`codelibrarian.api`."""
