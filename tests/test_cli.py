"""The ``teachgrad`` command in this checkout (tests/test_wheel.py runs it from a wheel).

Its bad arguments stop it with one line saying what to do (exit status 2), never with a
traceback or an overwritten file; ``teachgrad doctor`` names what is missing and the
extra to install; and the lessons read no files, so the notebooks are the whole course.
"""
import doctest
import json
import pathlib

import pytest

from teachgrad import cli
from teachgrad.cli import commands, doctor
from teachgrad.course import files

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_in_a_checkout_the_lessons_are_the_repositorys():
    assert files.lessons_folder() == ROOT / "notebooks"
    assert files.course_folder() == ROOT / "course"
    assert files.lessons() == sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert doctest.testmod(files).failed == 0


def test_lessons_copies_the_course_into_a_new_folder(tmp_path, capsys):
    assert cli.main(["lessons", str(tmp_path / "new" / "course")]) == 0
    written = sorted(p.name for p in (tmp_path / "new" / "course").iterdir())
    assert written == [p.name for p in files.lessons()]
    assert f"{len(written)} lessons in" in capsys.readouterr().out


#: What each command needs beyond teachgrad (the `grading` extra); the core-only runs
#: (make test-oldest, test-newest) lack it, and the command then says so instead.
NEEDS = {"lessons": None, "student-edition": "nbgrader", "otter": "nbformat"}


@pytest.mark.parametrize("command", list(NEEDS))
def test_a_folder_with_something_in_it_is_never_written_to(tmp_path, capsys, command):
    if NEEDS[command]:
        pytest.importorskip(NEEDS[command], reason="the grading extra")
    (tmp_path / "notes.txt").write_text("mine")
    assert cli.main([command, str(tmp_path)]) == 2
    said = capsys.readouterr().err
    assert said == (f"teachgrad {command}: {tmp_path} is not empty (1 entries): give a new "
                    f"or empty folder, so nothing in it is overwritten\n")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert cli.main([command, str(tmp_path / "notes.txt")]) == 2
    assert "notes.txt is a file, not a folder" in capsys.readouterr().err


def test_an_unknown_command_or_none_says_what_the_commands_are(capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(["student"])
    assert stopped.value.code == 2
    assert "invalid choice: 'student' (choose from 'lessons', 'student-edition', 'otter', " \
        "'doctor')" in capsys.readouterr().err
    assert cli.main([]) == 2
    assert "lessons" in capsys.readouterr().out


def test_a_command_whose_tool_is_missing_names_the_extra(monkeypatch):
    with pytest.raises(commands.CommandError, match=r"the student edition needs "
                       r"no_such_tool_xyz, which is not installed here: pip install "
                       r"'teachgrad\[grading\]'"):
        commands._needs("no_such_tool_xyz", "the student edition")


def test_a_package_without_course_files_says_how_to_get_them(monkeypatch, tmp_path):
    monkeypatch.setattr(files, "CHECKOUT", tmp_path)
    with pytest.raises(files.MissingCourse, match="has no course files.*clone"):
        files.lessons_folder()
    assert cli.main(["lessons", str(tmp_path / "out")]) == 2
    assert not (tmp_path / "out").exists()


def test_a_broken_lesson_stops_the_student_edition_with_its_problem(tmp_path, monkeypatch,
                                                                    capsys):
    pytest.importorskip("nbgrader", reason="the grading extra")
    lesson = json.loads(files.lessons()[0].read_text())
    del next(c for c in lesson["cells"] if c["metadata"].get("nbgrader", {}).get("grade"))[
        "metadata"]["nbgrader"]["points"]
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "01_broken.ipynb").write_text(json.dumps(lesson))
    monkeypatch.setattr(files, "lessons_folder", lambda: tmp_path / "lessons")
    assert cli.main(["student-edition", str(tmp_path / "out")]) == 2
    said = capsys.readouterr().err
    assert said.startswith("teachgrad student-edition: student edition not built:\n"
                           "01_broken.ipynb, cell ")
    assert "is a grade cell without points" in said
    assert list((tmp_path / "out").iterdir()) == []


def test_doctor_reports_each_thing_with_what_to_do(monkeypatch, capsys):
    assert cli.main(["doctor"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("teachgrad doctor: Python ")
    assert len(lines) == 1 + len(doctor.CHECKS)
    assert all(line.split()[0] in ("ok", "missing", "optional") for line in lines[1:])
    monkeypatch.setattr(doctor, "version", lambda name: None)
    monkeypatch.setattr(doctor, "dot_version", lambda: None)
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    report = {what: (status, detail) for status, what, detail in doctor.report()}
    assert report["nbgrader"] == ("missing", "teachgrad student-edition needs it: "
                                             "pip install 'teachgrad[grading]'")
    assert report["the bundled Graphviz (no dot)"][0] == "ok"
    assert "jupyterlab_widgets" in report["widget front end"][1]
    assert report["widget front end"][0] == "optional"
    assert "pip install 'teachgrad[course]'" in report["what the lessons import"][1]
    assert "otter grade -n NAME" in report["Docker"][1]


def test_doctor_finds_no_dot_where_no_process_can_start(monkeypatch):
    def no_processes(*args, **kwargs):
        raise OSError(38, "Function not implemented")     # Pyodide's ENOSYS
    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/dot")
    monkeypatch.setattr(doctor.subprocess, "run", no_processes)
    assert doctor.dot_version() is None
    assert doctor.check_drawings()[1] == "the bundled Graphviz (no dot)"


def test_the_lessons_open_no_files_so_the_notebooks_are_the_whole_course():
    # teachgrad lessons DIR copies only the notebooks: a lesson that starts reading a
    # file beside it must ship that file too (setup.py, teachgrad/cli/commands.py).
    reads = ("open(", "read_text(", "read_bytes(", "np.load(", "loadtxt(", "read_csv(",
             "%run", "%load", "Path(")
    for path in files.lessons():
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] == "code":
                assert not [r for r in reads if r in source], (path.name, source[:200])
