"""The machinery every op is made with.

``Op`` and ``Node`` (op.py), the declaration verbs (declare.py, user_rules.py), the interpreters (apply.py),
converting inputs (inputs.py), batching for ``tg.vmap`` (batching.py), names
(naming.py), shapes known before running (shape_inference.py) and the shape facts rules
check (grad_util.py).
"""
from .op import Node, Op
