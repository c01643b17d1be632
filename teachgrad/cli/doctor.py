"""``teachgrad doctor``: what this environment has for the course, and what it lacks.

One line per thing the course uses, each saying what it changes for a student or an
instructor: the lessons (from the package or a checkout), the backend (numpy; CuPy and
a GPU), how drawings are laid out (Graphviz's ``dot``, else the Graphviz build bundled
in teachgrad, which lays them out in the browser), ipywidgets and its front-end
packages (the live steppers), what the lessons import (the ``course`` extra), nbgrader
and otter-grader (the ``grading`` extra) and Docker (``otter grade``). Each check is a
function returning ``(status, what, detail)``; status is ``"ok"``, ``"missing"`` (the
course or a command needs it) or ``"optional"`` (only some uses need it).

Nothing here needs a process to start: ``dot`` is asked its version, and a platform
that cannot start processes (Pyodide raises OSError) is reported as having no ``dot``.
"""
import importlib.metadata
import platform
import shutil
import subprocess

from .._version import __version__
from ..course import files

GRADING = "pip install 'teachgrad[grading]'"


def version(distribution):
    """The installed version of ``distribution`` (a pip name), or None."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_teachgrad():
    try:
        folder = files.lessons_folder()
    except files.MissingCourse as error:
        return "missing", f"teachgrad {__version__}", str(error)
    where = "the installed package" if "shipped" in folder.parts else f"the checkout's {folder}"
    return "ok", f"teachgrad {__version__}", (
        f"{len(files.lessons(folder))} lessons, from {where} (teachgrad lessons DIR)")


def check_numpy():
    return "ok", f"numpy {version('numpy')}", "the backend: arrays on the CPU (the default)"


def check_gpu():
    from .. import backend

    try:
        with backend.using("cupy"):
            pass
    except RuntimeError as error:
        return "optional", "CuPy (GPU backend)", f"{error}".split("\n")[0]
    import cupy

    name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
    name = name.decode() if isinstance(name, bytes) else name
    return "ok", f"CuPy {cupy.__version__}", f"tg.set_backend('cupy') runs on {name}"


def dot_version():
    """``dot -V``'s answer, or None where ``dot`` is missing or cannot be started."""
    if shutil.which("dot") is None:
        return None
    try:
        result = subprocess.run(["dot", "-V"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return (result.stderr or result.stdout).strip() if result.returncode == 0 else None


def check_drawings():
    found = dot_version()
    if found:
        return "ok", "Graphviz dot", f"{found}: drawings are SVG, laid out here"
    from ..viz import wasm

    try:
        size = len(wasm.viz_js()) / 1e6
    except RuntimeError as error:
        return "missing", "Graphviz dot", f"no dot, and no bundled layout: {error}"
    return "ok", "the bundled Graphviz (no dot)", (
        f"drawings are laid out in the browser by teachgrad's Viz.js ({size:.1f} MB, "
        f"inside the package; no network). For SVG made here: {wasm.INSTALL_GRAPHVIZ}")


def check_widgets():
    return "ok", f"ipywidgets {version('ipywidgets')}", "the steppers' live widget (kernel side)"


def check_widget_front_end():
    found = {name: version(name) for name in ("jupyterlab_widgets", "widgetsnbextension")}
    have = ", ".join(f"{name} {v}" for name, v in found.items() if v)
    where = ("here; a Jupyter server started from another environment shows widgets "
             "only if that one has them")
    if not have:
        return "optional", "widget front end", (
            "neither jupyterlab_widgets (JupyterLab 4, Notebook 7) nor widgetsnbextension "
            f"is installed {where}. pip install 'teachgrad[lab]' brings JupyterLab with them")
    return "ok", "widget front end", f"{have}, {where}"


def check_front_ends():
    found = [f"{label} {version(name)}" for name, label in (
        ("jupyterlab", "JupyterLab"), ("notebook", "Notebook")) if version(name)]
    if not found:
        return "optional", "Jupyter front end", (
            "no JupyterLab or Notebook here: open the lessons in another front end (VS Code, "
            "Colab, a Hub), or pip install 'teachgrad[lab]'")
    return "ok", "Jupyter front end", ", ".join(found)


def check_course_extra():
    wanted = {"scikit-learn": "lesson 10's digits", "tqdm": "lesson 10's progress bar",
              "matplotlib": "the lessons' plots"}
    lacking = [f"{name} ({why})" for name, why in wanted.items() if version(name) is None]
    if lacking:
        return "missing", "what the lessons import", (
            f"lacks {', '.join(lacking)}: pip install 'teachgrad[course]'")
    return "ok", "what the lessons import", ", ".join(f"{n} {version(n)}" for n in wanted)


def check_nbgrader():
    if version("nbgrader") is None:
        return "missing", "nbgrader", f"teachgrad student-edition needs it: {GRADING}"
    return "ok", f"nbgrader {version('nbgrader')}", "teachgrad student-edition; grading"


def check_otter():
    if version("otter-grader") is None:
        return "optional", "otter-grader", (
            f"only for the otter route (teachgrad otter DIR, then otter assign): {GRADING}")
    return "ok", f"otter-grader {version('otter-grader')}", "otter assign, otter run"


def check_docker():
    if shutil.which("docker") is None:
        return "optional", "Docker", ("not found: `otter grade -n NAME` grades a folder of "
                                      "submissions in Docker; `otter run` grades one without")
    return "ok", "Docker", "found: `otter grade -n NAME` can grade in containers"


CHECKS = (check_teachgrad, check_numpy, check_gpu, check_drawings, check_widgets,
          check_widget_front_end, check_front_ends, check_course_extra, check_nbgrader,
          check_otter, check_docker)


def report():
    """Every check's ``(status, what, detail)``, in order."""
    return [check() for check in CHECKS]


def main():
    """Print the report; exit status 0 (a report, not a test: "missing" says what to do)."""
    print(f"teachgrad doctor: Python {platform.python_version()} ({platform.platform()})")
    for status, what, detail in report():
        print(f"  {status:<8} {what}: {detail}")
    return 0
