"""The course as files, for an instructor: the lessons, their student edition, otter's form.

The fifteen lessons (``NN_name.ipynb``) and the course's nbgrader files
(``nbgrader_config.py``, ``header.ipynb``) travel in the wheel as package data, so a
``pip install teachgrad`` has the whole course; in a checkout they are read from the
repository's ``notebooks/`` and ``course/`` (``files``). The ``teachgrad`` command
(``teachgrad.cli``) lays them out:

- ``lessons``: the lessons as they are, solved (``teachgrad lessons DIR``);
- ``student_edition``: nbgrader's student edition (``teachgrad student-edition DIR``,
  ``make student``), needs the ``grading`` extra;
- ``otter_edition``: each lesson in otter-grader's format (``teachgrad otter DIR``).

``student_edition`` and ``otter_edition`` import nbgrader's and otter's formats only when
they are used, so ``import teachgrad.course`` needs nothing beyond teachgrad's own
dependencies.
"""
from .files import course_folder, lessons, lessons_folder

__all__ = ["course_folder", "lessons", "lessons_folder"]
