"""The wheel carries the course: setuptools' build step, then the lessons copied in.

Everything about the package is in pyproject.toml; this file adds one thing setuptools'
configuration cannot say: the lessons (notebooks/NN_name.ipynb) and the course's
nbgrader files (course/nbgrader_config.py, course/header.ipynb) become package data in
``teachgrad/course/shipped/``, where ``teachgrad.course.files`` finds them in an
installed wheel (``teachgrad lessons DIR``). The repository keeps them where authors edit
them; an editable install reads them there, so nothing is copied for it. MANIFEST.in
puts the same files in the sdist, so a wheel built from the sdist has them too.
"""
import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
SHIPPED = ("teachgrad", "course", "shipped")
COURSE_FILES = ("nbgrader_config.py", "header.ipynb")


def course_files():
    """``(source, folder in shipped/)`` for each file the wheel's course needs."""
    lessons = sorted((HERE / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    if not lessons:
        raise SystemExit(f"no lessons (NN_name.ipynb) in {HERE / 'notebooks'}: the wheel "
                         f"would have no course. Build from the repository or a full sdist")
    course = [HERE / "course" / name for name in COURSE_FILES]
    missing = [str(path) for path in course if not path.is_file()]
    if missing:
        raise SystemExit(f"the course's files are missing: {', '.join(missing)}")
    return [(path, "notebooks") for path in lessons] + [(path, "course") for path in course]


class build_py_with_course(build_py):
    """setuptools' build_py, then the lessons and course files into the build folder."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return          # an editable install reads notebooks/ and course/ in place
        target = pathlib.Path(self.build_lib, *SHIPPED)
        for source, folder in course_files():
            (target / folder).mkdir(parents=True, exist_ok=True)
            self.copy_file(str(source), str(target / folder / source.name))


setup(cmdclass={"build_py": build_py_with_course})
