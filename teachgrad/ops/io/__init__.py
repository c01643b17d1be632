"""Ops with an effect on the world outside the arrays: ``tg.print``'s op and how it
writes a tensor (``formatting.py``)."""
