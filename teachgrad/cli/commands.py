"""What ``teachgrad lessons``, ``student-edition`` and ``otter`` do, each on a fresh folder.

Each takes the parsed arguments (``args.dir``: where to write), writes into a new or
empty folder only, prints one line saying what it wrote, and raises ``CommandError``
(one line: what is wrong and what to do) instead of overwriting anything or failing
half-way with a traceback.
"""
import importlib.util
import pathlib
import shutil

from ..course import files

GRADING = "pip install 'teachgrad[grading]'"


class CommandError(Exception):
    """A command cannot run as asked: the message says why and what to do."""


def fresh_folder(path):
    """``path`` as a Path, made if missing; a CommandError unless it is new or empty."""
    folder = pathlib.Path(path).expanduser()
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{folder} is a file, not a folder: give a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise CommandError(f"{folder} is not empty ({len(list(folder.iterdir()))} entries): "
                           f"give a new or empty folder, so nothing in it is overwritten")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(f"cannot make the folder {folder}: {error.strerror}") from None
    return folder


def _course_lessons():
    try:
        found = files.lessons()
    except files.MissingCourse as error:
        raise CommandError(str(error)) from None
    if not found:
        raise CommandError(f"no lessons (NN_name.ipynb) in {files.lessons_folder()}")
    return found


def _needs(module, what):
    if importlib.util.find_spec(module) is None:
        raise CommandError(f"{what} needs {module}, which is not installed here: {GRADING}")


def lessons(args):
    """``teachgrad lessons DIR``: the lessons as they ship (solved, with their outputs).
    They read no files of their own (the capstone's digits come with scikit-learn), so
    the notebooks are the whole course; the ``course`` extra has what they import."""
    found = _course_lessons()
    folder = fresh_folder(args.dir)
    for path in found:
        shutil.copyfile(path, folder / path.name)
    print(f"{len(found)} lessons in {folder} (solved; `teachgrad student-edition` makes "
          f"the students' edition). Open them with: jupyter lab {folder}")


def student_edition(args):
    """``teachgrad student-edition DIR``: what ``make student`` builds, by nbgrader."""
    _needs("nbgrader", "the student edition")
    from ..course import student_edition as edition

    found = _course_lessons()
    folder = fresh_folder(args.dir)
    try:
        written = edition.build(folder, found)
    except edition.BuildError as error:        # nothing was written
        raise CommandError(f"student edition not built:\n{error}") from None
    print(f"student edition: {len(written)} lessons in {folder} (stubs instead of "
          f"solutions, no outputs)")


def otter(args):
    """``teachgrad otter DIR``: each lesson as otter-grader's master notebook, in
    ``DIR/<lesson>/<lesson>.ipynb``; ``otter assign`` in each folder does the rest."""
    _needs("nbformat", "the otter edition")
    from ..course import otter_edition

    found = _course_lessons()
    folder = fresh_folder(args.dir)
    try:
        written = otter_edition.write(folder, found)
    except ValueError as error:
        raise CommandError(f"otter edition not written: {error}") from None
    print(f"otter masters: {len(written)} lessons in {folder}; in each lesson's folder, "
          f"`otter assign <lesson>.ipynb dist` writes its student edition and autograder")
