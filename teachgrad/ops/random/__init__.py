"""Random numbers as ops: where each draw's numbers come from (``seeds.py``), the draws
(``draws.py``) and ``tg.random.Generator`` (``generator.py``). ``tg.random`` is where
they are public."""
