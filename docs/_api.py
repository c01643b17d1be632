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
    ("Printing", ("teachgrad.ops.io",),
     "`tg.print` is an op with an effect: eagerly it writes at once, in a traced function on "
     "every call, where Python's `print` runs once, at trace time (see "
     "[How the optimiser works](optimizer.md))."),
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
    ("Function transformations", ("teachgrad.autodiff.functional",
                                  "teachgrad.autodiff.linear"),
     "JAX-style functions that return derivative functions. Each takes and returns "
     "*pytrees*, by JAX's rules (`tg.nest.tree_flatten`): nested tuples, lists, dicts "
     "(their leaves in sorted key order) and namedtuples of tensors, with None an empty "
     "subtree. `tg.grad(loss)({\"w\": w, \"b\": b})` returns `{\"b\": db, \"w\": dw}`; "
     "`argnums` picks the arguments (an int or a tuple), and each argument slot is "
     "differentiated alone, so `tg.grad(lambda a: a * x)(x)` is `x` even where `f` also "
     "captures `x`. `has_aux=True` lets `f` return `(value, aux)`: `grad` then returns "
     "`(g, aux)`, `value_and_grad` `((value, aux), g)`. A Jacobian of a tree-valued `f` "
     "is a tree like the output whose leaves are trees like the argument. "
     "`tg.linearize(f, *primals)` gives `(out, f_jvp)`, the JVP's linear map, evaluated "
     "at any number of tangents without running `f` again; `tg.linear_transpose(f, "
     "*primals)` transposes a linear `f` (a backward pass over its tape), and "
     "transposing a VJP function gives the JVP: "
     "`tg.linear_transpose(vjp_fn, u)((x_dot,)) == (J x_dot,)`, lesson 5's trick."),
    ("Vectorization", ("teachgrad.autodiff.vectorize",),
     "A function of one example, run on a whole batch in one pass: each op applies its "
     "batching rule (declared in its block with `tg.ops.defbatch`, beside its VJP and JVP; "
     "see [How the engine works](engine.md)). Per-example gradients are "
     "`tg.vmap(tg.grad(loss), in_axes=(None, 0))(w, xs)`. Jacobians are vectorized the "
     "same way: `tape.jacobian`, `tape.batch_jacobian` and `tg.jacrev` map ONE backward "
     "pass over the one-hot cotangents, `tg.jacfwd` one forward pass over the one-hot "
     "tangents (`experimental_use_pfor=False` keeps the tape's loop of one pass per row). "
     "`in_axes` and `out_axes` are prefixes of the argument and result trees, as in JAX: "
     "`in_axes=({\"w\": None, \"b\": 0}, 0)` shares `w` and maps `b`; a shared (None) "
     "argument may be anything (a function, a string); keyword arguments are mapped over "
     "axis 0. Variables may be mapped over, captured or passed; tapes and accumulators "
     "see them."),
    ("Custom gradients", ("teachgrad.autodiff.custom",), ""),
    ("Checking gradients", ("teachgrad.autodiff.gradcheck",), ""),
    ("Graph mode", ("teachgrad.graph",), ""),
    ("Control flow", ("teachgrad.control_flow",),
     "Loops and branches with gradients, eager and in graphs, and the sequence functions "
     "built on `while_loop` and `TensorArray` (`scan`, `map_fn`, `foldl`, `foldr`), whose "
     "gradients are loops too (backpropagation through time). In a graph they loop over "
     "a length known only when it runs (a placeholder of shape `[None, ...]`), and a "
     "`dynamic_size` TensorArray grows at an index computed in the loop."),
    ("Backends", ("teachgrad.backend",),
     "Which array library runs the kernels: numpy, or CuPy on an NVIDIA GPU."),
    ("Explaining gradients", ("teachgrad.debug",), ""),
]

# Submodules documented as a whole (their own public members), when the package has them.
SUBMODULES = [
    ("Linear algebra: `tg.linalg`", "linalg"),
    ("Deep learning: `tg.nn`", "nn"),
    ("Random numbers: `tg.random`", "random"),
    ("Optimizers: `tg.optimizers`", "optimizers"),
    ("Visualizers: `tg.viz`", "viz"),
    ("Debugging: `tg.debug`", "debug"),
    ("Exercises: `tg.exercises`", "exercises"),
]

# A submodule whose names come from several modules lists them by family: the module
# that defines each name gives its family (in this order); unlisted ones come last.
FAMILIES = {
    "nn": [("Convolution", ("teachgrad.ops.nn.conv", "teachgrad.nn")),
           ("Pooling", ("teachgrad.ops.nn.pooling",)),
           ("Normalisation", ("teachgrad.ops.nn.normalization",)),
           ("Dropout", ("teachgrad.ops.nn.dropout",)),
           ("Activations and the fused loss (the same ops as `tg.relu`, ...)",
            ("teachgrad.ops.nn.activations", "teachgrad.ops.elementwise.math"))],
}

DTYPES = ("float32", "float64", "int32", "int64", "bool_")

# What declares a new operation and its rules: used as `tg.ops.<name>`, not `tg.<name>`,
# and listed at the end of "Operations".
OP_DECLARATIONS = ("primitive", "defvjp", "defjvp", "defvjp_all", "not_differentiable", "bind")


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


def _rst(directive, target, *options, members=()):
    """One autodoc directive, in an ``eval-rst`` block.

    autodoc writes reStructuredText (napoleon turns the Google-style docstrings into it),
    and in a MyST page a plain ```{autofunction}``` fence would have that text parsed as
    Markdown: the page would show ``.. py:function::`` lines instead of the entries. An
    ``eval-rst`` block parses it as reStructuredText, as in an .rst page.
    """
    lines = [f".. {directive}:: {target}"] + [f"   {option}" for option in options]
    for kind, name in members:
        lines += ["", f"   .. {kind}:: {target}.{name}"]
    return "```{eval-rst}\n" + "\n".join(lines) + "\n```\n"


def _class_members(cls):
    """What ``:members:`` would list: the public methods and properties ``cls`` defines,
    in source order, that have a docstring, as (directive, name) pairs.

    The page names them one by one instead of using ``:members:``: each member gets
    exactly one entry (a submodule's names have their own entries too, so an
    ``automodule`` with ``:members:`` would describe them twice), in a known order.
    """
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, property):
            kind = "autoproperty"
        elif inspect.isfunction(value) or isinstance(value, (staticmethod, classmethod)):
            kind = "automethod"
        else:
            continue
        if inspect.getdoc(getattr(cls, name, None)):
            yield kind, name


def _directive(name, obj, package="teachgrad"):
    target = f"{package}.{name}"
    if inspect.isclass(obj):
        return _rst("autoclass", target, members=_class_members(obj))
    if callable(obj):
        return _rst("autofunction", target)
    if isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, str)
                                     for k, v in obj.items()):
        return _table(package, name, obj)
    return _rst("autodata", target, ":annotation:")


def _table(package, name, mapping):
    """A dict of names to descriptions (``tg.debug.KINDS``), listed entry by entry: autodoc
    would show the docstring of ``dict`` itself, since a dict has none of its own."""
    def escape(text):
        return "".join("\\" + c if c in "\\`*|_" else c for c in text)
    lines = [f".. py:data:: {name}", f"   :module: {package}", "",
             "   A dict; its keys, and what each one means:", ""]
    lines += [f"   * ``{key!r}``: {escape(value)}" for key, value in mapping.items()]
    return "```{eval-rst}\n" + "\n".join(lines) + "\n```\n"


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
        if title == "Operations":
            lines += ["### Declaring new operations", "",
                      "These are used as `tg.ops.<name>`: a new op is a `primitive` with a "
                      "VJP rule per input (`defvjp`) and, optionally, a native JVP rule "
                      "(`defjvp`).", ""]
            lines += [_rst("autofunction", f"teachgrad.ops.{name}") for name in OP_DECLARATIONS]
    if more:
        lines += ["## More", ""]
        for module in sorted(more):
            for name, obj in more[module]:
                lines.append(_directive(name, obj))
    for title, attribute in SUBMODULES:
        if isinstance(getattr(teachgrad, attribute, None), types.ModuleType):
            lines += [f"## {title}", ""] + _submodule(attribute)
    return "\n".join(lines) + "\n"


def _submodule(attribute):
    """A submodule's docstring, then each name of its ``__all__``: functions first (the
    tools), then classes, then data, each group in ``__all__`` order."""
    module = getattr(teachgrad, attribute)
    package = f"teachgrad.{attribute}"
    objects = [(name, getattr(module, name)) for name in getattr(module, "__all__", ())]

    def group(item):
        obj = item[1]
        return 1 if inspect.isclass(obj) else 0 if callable(obj) else 2
    objects = sorted(objects, key=group)
    lines = [_rst("automodule", package)]
    families = FAMILIES.get(attribute)
    if not families:
        return lines + [_directive(name, obj, package) for name, obj in objects]
    placed = set()
    for title, modules in families + [("More", ("",))]:
        members = [(name, obj) for name, obj in objects if name not in placed and any(
            _matches(getattr(obj, "__module__", ""), m) or not m for m in modules)]
        if members:
            lines += [f"### {title}", ""] + [_directive(name, obj, package)
                                              for name, obj in members]
            placed.update(name for name, _ in members)
    return lines


def write_api_page(path):
    """Write the page, touching the file only when its text changes (keeps rebuilds quick)."""
    text = render()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
