"""nbgrader's configuration for a teachgrad course: one assignment per lesson.

nbgrader reads this file from the directory it runs in, the course directory.
``python scripts/student_edition.py --course DIR`` lays DIR out with this file,
``header.ipynb`` and each lesson as its own assignment (``source/01_derivatives_on_a_tape/
01_derivatives_on_a_tape.ipynb``, ...); ``make student`` builds the student edition
with it. Then, in DIR:

    nbgrader generate_assignment 01_derivatives_on_a_tape    # release/01_.../
    nbgrader release_assignment 01_derivatives_on_a_tape     # to the exchange
    nbgrader collect 01_derivatives_on_a_tape
    nbgrader autograde 01_derivatives_on_a_tape

What it sets, and why:

- the course id and the exchange, which the students' Assignments panel reads too
  (``/srv/nbgrader/exchange``; the Teach a class page makes it);
- the stub that replaces a solution says what to do, not just ``NotImplementedError``;
- each student notebook starts with ``header.ipynb``'s cell: how the student edition
  works, and why Run All stops at the first exercise not done yet;
- the solved run's widget state (100-330 KB a lesson: its steppers' frames) is dropped
  from the notebook's metadata, so a student's notebook carries none of it;
- nbgrader starts the ``alembic`` program for its gradebook: the folder of the Python
  that runs nbgrader goes first on PATH, so a venv's nbgrader finds the venv's alembic
  without the venv being activated.
"""
import os
import sys

c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)

c.CourseDirectory.course_id = "teachgrad"
c.Exchange.root = "/srv/nbgrader/exchange"

c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\n'
              'raise NotImplementedError("write your answer here, then run this cell again")'}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

c.IncludeHeaderFooter.header = "header.ipynb"

# Drop the notebook's widget state; keep what the kernel and JupyterLab need.
c.Exporter.preprocessors = ["nbconvert.preprocessors.ClearMetadataPreprocessor"]
c.ClearMetadataPreprocessor.enabled = True
c.ClearMetadataPreprocessor.clear_cell_metadata = False
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {"kernelspec", "language_info"}

c.ExecutePreprocessor.timeout = 300   # the longest lesson (the capstone) takes about a minute

os.environ["PATH"] = os.pathsep.join([os.path.dirname(sys.executable),
                                      os.environ.get("PATH", "")])
