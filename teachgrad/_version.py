"""teachgrad's version, kept here only: pyproject.toml reads it (``dynamic = ["version"]``)
and ``teachgrad.__version__`` is this. CHANGELOG.md says what each version changed."""
__version__ = "0.1.0"
