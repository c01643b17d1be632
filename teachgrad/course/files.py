"""Where the course's files are: in the installed package, or in a checkout.

A wheel carries the lessons and the course's nbgrader files as package data, in
``teachgrad/course/shipped/notebooks/`` and ``teachgrad/course/shipped/course/`` (setup.py
copies them there from the repository's ``notebooks/`` and ``course/`` while it builds).
An editable install or a checkout on ``PYTHONPATH`` has no such folder: there the
repository's own ``notebooks/`` and ``course/`` are the course.

    >>> from teachgrad.course import lessons
    >>> [path.name for path in lessons()][:2]
    ['01_derivatives_on_a_tape.ipynb', '02_backward_pass_as_a_queue.ipynb']
"""
import importlib.resources
import pathlib

#: The repository's root, when this package runs from a checkout (teachgrad/course/ in it).
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]


class MissingCourse(RuntimeError):
    """Neither the installed package nor a checkout holds the course's files."""


def _folder(name):
    shipped = importlib.resources.files(__package__) / "shipped" / name
    if shipped.is_dir():
        # A wheel installs unpacked, so the resource is a real folder (a pathlib.Path).
        return pathlib.Path(str(shipped))
    checkout = CHECKOUT / name
    if (CHECKOUT / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    raise MissingCourse(
        f"this teachgrad ({pathlib.Path(__file__).parent.parent}) has no course files: "
        f"neither teachgrad/course/shipped/{name}/ (a wheel's) nor a repository's {name}/ "
        f"beside it. Install teachgrad from a wheel or sdist built by setup.py, or run it "
        f"from a clone of the repository")


def lessons_folder():
    """The folder of the lessons (``NN_name.ipynb``): the package's, else the checkout's."""
    return _folder("notebooks")


def course_folder():
    """The folder of ``nbgrader_config.py`` and ``header.ipynb`` (the repository's course/)."""
    return _folder("course")


def lessons(folder=None):
    """The course's lessons in order: ``NN_name.ipynb`` in ``folder`` (the course's by
    default). Other notebooks there (a scratch copy, a conftest) are not lessons."""
    folder = lessons_folder() if folder is None else pathlib.Path(folder)
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))
