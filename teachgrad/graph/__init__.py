"""Graph mode: symbolic graphs, Sessions that run them, and ``tg.function``."""
from .graph import Graph, get_default_graph, name_scope, placeholder
from .session import Session
from .concrete import ConcreteFunction
from .function import Function, function
from .signature import TensorSpec
