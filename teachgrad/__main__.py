"""``python -m teachgrad``: the ``teachgrad`` command (teachgrad.cli)."""
import sys

from .cli import main

sys.exit(main())
