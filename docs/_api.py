"""Write the API reference page from what ``import teachgrad as tg`` exposes.

Every public name of the ``teachgrad`` namespace is documented as
``teachgrad.<name>`` (the way lessons use it, ``tg.<name>``), grouped by the
module that defines it. A name added to the package appears here without
editing the docs: a module that no section below claims lands in "More".
"""
import inspect
import types

import teachgrad

# (title, module prefixes, introduction), in page order.
SECTIONS = [
    ("Tensors and Variables", ("teachgrad.tensor",),
     "A `Tensor` holds an array of the current backend (concrete) or stands for a value "
     "in a graph (symbolic). A `Variable` is a mutable tensor that tapes watch when it is "
     "trainable."),
    ("Operations", ("teachgrad.ops",),
     "Every operation is declared once, in `teachgrad/ops/`, with its forward computation "
     "and its VJP rule (and sometimes a native JVP rule). Operator syntax (`+ - * / ** @`, "
     "unary `-`, indexing, comparisons) calls the same operations."),
    ("Reverse mode", ("teachgrad.autodiff.tape", "teachgrad.autodiff.aggregation",
                      "teachgrad.autodiff.gradients"),
     "`GradientTape` records operations as they run; `tg.gradients` differentiates a "
     "graph. Both run the same backward engine (see [How the engine works](engine.md))."),
    ("Forward mode", ("teachgrad.autodiff.forward",),
     "Jacobian-vector products computed alongside the forward pass."),
    ("Function transformations", ("teachgrad.autodiff.functional",),
     "JAX-style functions that return derivative functions."),
    ("Custom gradients", ("teachgrad.autodiff.custom",), ""),
    ("Checking gradients", ("teachgrad.autodiff.gradcheck",), ""),
    ("Graph mode", ("teachgrad.graph",), ""),
    ("Control flow", ("teachgrad.control_flow",), ""),
    ("Backends", ("teachgrad.backend",),
     "Which array library runs the kernels: numpy, or CuPy on an NVIDIA GPU."),
    ("Explaining gradients", ("teachgrad.debug",), ""),
]

# Submodules documented as a whole (their own public members), when the package has them.
SUBMODULES = [
    ("Visualizers: `tg.viz`", "viz"),
    ("Debugging: `tg.debug`", "debug"),
    ("Exercises: `tg.exercises`", "exercises"),
]

DTYPES = ("float32", "float64", "int32", "int64", "bool_")


def _public_objects():
    for name in sorted(vars(teachgrad)):
        if name.startswith("_") or name in DTYPES:
            continue
        obj = getattr(teachgrad, name)
        if isinstance(obj, types.ModuleType):
            continue
        module = getattr(obj, "__module__", None) or ""
        if not module.startswith("teachgrad"):
            continue
        yield name, obj, module


def _directive(name, obj):
    target = f"teachgrad.{name}"
    if inspect.isclass(obj):
        return f"```{{autoclass}} {target}\n:members:\n```\n"
    if callable(obj):
        return f"```{{autofunction}} {target}\n```\n"
    return f"```{{autodata}} {target}\n:annotation:\n```\n"


def _matches(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def _section_of(module):
    for index, (_, prefixes, _) in enumerate(SECTIONS):
        if any(_matches(module, p) for p in prefixes):
            return index
    return None


def _module_order(prefixes):
    """Sort a section's modules in the order its prefixes are listed, then by name."""
    def key(module):
        return (next(i for i, p in enumerate(prefixes) if _matches(module, p)), module)
    return key


def render():
    """The page, as MyST Markdown."""
    grouped = {i: {} for i in range(len(SECTIONS))}
    more = {}
    for name, obj, module in _public_objects():
        index = _section_of(module)
        bucket = more if index is None else grouped[index]
        bucket.setdefault(module, []).append((name, obj))

    lines = [
        "# API reference",
        "",
        "Everything below is available after `import teachgrad as tg`, as `tg.<name>`.",
        "This page is generated from the docstrings (`docs/_api.py`); "
        "each entry links to its source.",
        "",
    ]
    for index, (title, prefixes, intro) in enumerate(SECTIONS):
        modules = grouped[index]
        if not modules:
            continue
        lines += [f"## {title}", ""]
        if intro:
            lines += [intro, ""]
        if title == "Tensors and Variables":
            names = ", ".join(f"`tg.{d}`" for d in DTYPES if hasattr(teachgrad, d))
            lines += [f"Data types: {names} (numpy's dtypes).", ""]
        for module in sorted(modules, key=_module_order(prefixes)):
            if len(modules) > 1:
                short = module.rsplit(".", 1)[-1]
                lines += [f"### `{short}`", "", f"Defined in `{module}`.", ""]
            for name, obj in modules[module]:
                lines.append(_directive(name, obj))
    if more:
        lines += ["## More", ""]
        for module in sorted(more):
            for name, obj in more[module]:
                lines.append(_directive(name, obj))
    for title, attribute in SUBMODULES:
        if isinstance(getattr(teachgrad, attribute, None), types.ModuleType):
            lines += [f"## {title}", "", f"```{{automodule}} teachgrad.{attribute}",
                      ":members:", "```", ""]
    return "\n".join(lines) + "\n"


def write_api_page(path):
    """Write the page, touching the file only when its text changes (keeps rebuilds quick)."""
    text = render()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
