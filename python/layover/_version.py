"""The one place layover's version is written: the Makefile passes it to the
C++ build (LAYOVER_VERSION), pyproject.toml reads it, and layover.__version__
is this."""
__version__ = "0.1.0"
