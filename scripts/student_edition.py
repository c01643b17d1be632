"""Build the student edition of the course with nbgrader (make student).

    python scripts/student_edition.py [OUT]      # OUT defaults to build/student

The lessons in notebooks/ are the instructor's source: each exercise's solution sits
between nbgrader's markers (### BEGIN SOLUTION / ### END SOLUTION) in a cell with
nbgrader's metadata, and each is followed by a locked check cell. nbgrader's own
generate_assignment turns them into the student edition: solutions become stubs
(`raise NotImplementedError()`, or "YOUR ANSWER HERE" in a written answer), outputs
are cleared, check cells are locked. The lessons are laid out as one nbgrader
assignment, "lessons", in a throw-away course directory, so an instructor's own
nbgrader set-up (source/lessons/*.ipynb) gives the same result.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
ASSIGNMENT = "lessons"


def lessons(notebooks=ROOT / "notebooks"):
    """The course's lessons, in order."""
    return sorted(notebooks.glob("[0-9][0-9]_*.ipynb"))


def nbgrader(*args, root):
    """Run an nbgrader command on the course directory ``root``; stops on failure."""
    command = [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={root}"]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"nbgrader {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result


def make_course(root, notebooks=None):
    """Lay the lessons out as nbgrader's source of the assignment ``lessons``."""
    source = pathlib.Path(root) / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    for notebook in notebooks or lessons():
        shutil.copy(notebook, source / notebook.name)
    return source


def build(out, notebooks=None):
    """Write the student edition of ``notebooks`` (all lessons by default) into ``out``."""
    out = pathlib.Path(out)
    with tempfile.TemporaryDirectory(prefix="teachgrad-course-") as root:
        make_course(root, notebooks)
        nbgrader("generate_assignment", ASSIGNMENT, "--no-db", "--force", root=root)
        release = pathlib.Path(root) / "release" / ASSIGNMENT
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(release, out)
    return sorted(out.glob("*.ipynb"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "build" / "student"))
    written = build(parser.parse_args().out)
    print(f"student edition: {len(written)} lessons in {parser.parse_args().out}")


if __name__ == "__main__":
    main()
