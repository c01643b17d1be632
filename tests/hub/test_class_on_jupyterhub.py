"""A class on one JupyterHub: eight students work through lesson 2 at the same time.

Each student logs in through the Hub's login page, asks the Hub's API for a server, and
runs lesson 2 (the BackpropStepper lesson) on a kernel of that server, all at once. Every
student's outputs must match the solved notebook, compared as nbval compares them (the
text outputs, after notebooks/sanitize.cfg). The test writes what it measured (time to
serve everyone, each server's memory) to test-output/hub/class.json and prints it; a
second test sizes one student's server after the course's last lesson (last_lesson.json).
"""
import configparser
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

from hubserver import REPO, Student

STUDENTS = 8
LESSON = REPO / "notebooks" / "02_backward_pass_as_a_queue.ipynb"
#: The course's last lesson (numbered notebooks sort in order): a student's server is sized
#: after it, when the kernel has done the most.
LAST_LESSON = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))[-1]
SERVER_TIMEOUT = 180    # seconds for every server to start, on a loaded 2-core machine
CELL_TIMEOUT = 180


def _sanitizers():
    """notebooks/sanitize.cfg's (regex, replacement) pairs, in order."""
    parser = configparser.ConfigParser()
    parser.read(REPO / "notebooks" / "sanitize.cfg")
    return [(re.compile(parser[s]["regex"]), parser[s]["replace"]) for s in parser.sections()]


def comparable(outputs, sanitizers=_sanitizers()):
    """What nbval compares of a cell's outputs: the printed text and the text/plain reprs
    (not SVG, HTML or widget models), sanitized. Consecutive stream chunks are joined."""
    found = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if found and found[-1][0] == output["name"]:
                found[-1] = (output["name"], found[-1][1] + text)
                continue
            found.append((output["name"], text))
        elif kind in ("execute_result", "display_data"):
            found.append(("text/plain", "".join(output["data"].get("text/plain", ""))))
        elif kind == "error":
            found.append(("error", output["ename"]))
    cleaned = []
    for kind, text in found:
        for pattern, replacement in sanitizers:
            text = pattern.sub(replacement, text)
        cleaned.append((kind, text))
    return cleaned


def _serve(hub, name, notebook):
    """One student's session; returns its outputs and timings."""
    student = Student(hub, name)
    start = time.monotonic()
    student.log_in()
    student.start_server(SERVER_TIMEOUT)
    ready = time.monotonic()
    outputs = student.run_notebook(notebook, CELL_TIMEOUT)
    done = time.monotonic()
    return {"name": name, "outputs": outputs, "server_start_s": round(ready - start, 1),
            "lesson_s": round(done - ready, 1), "memory_mb": student.memory_after_lesson / 2**20,
            "student": student}


def test_eight_students_run_the_stepper_lesson_at_once(hub):
    notebook = json.loads(LESSON.read_text())
    expected = [comparable(cell.get("outputs", [])) for cell in notebook["cells"]
                if cell["cell_type"] == "code"]
    started = time.monotonic()
    with ThreadPoolExecutor(STUDENTS) as pool:
        sessions = list(pool.map(lambda k: _serve(hub, f"student{k}", notebook),
                                 range(STUDENTS)))
    served_all_s = time.monotonic() - started

    for session in sessions:
        got = [comparable(outputs) for outputs in session["outputs"]]
        assert len(got) == len(expected)
        for index, (mine, solved) in enumerate(zip(got, expected)):
            assert mine == solved, (f"{session['name']}, code cell {index}: got {mine!r}, "
                                    f"the solved lesson has {solved!r}")
        stepper = [o for outputs in session["outputs"] for o in outputs
                   if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert stepper, f"{session['name']}'s kernel built no widget (the BackpropStepper)"

    report = {
        "students": STUDENTS,
        "served_all_s": round(served_all_s, 1),
        "server_start_s": [s["server_start_s"] for s in sessions],
        "lesson_s": [s["lesson_s"] for s in sessions],
        "server_memory_mb": [round(s["memory_mb"]) for s in sessions],
    }
    out = REPO / "test-output" / "hub"
    out.mkdir(parents=True, exist_ok=True)
    (out / "class.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\n{STUDENTS} students served lesson 2 in {report['served_all_s']} s: "
          f"{report}")
    # A server with a kernel that imported teachgrad and numpy: the test measured them.
    assert all(mb > 100 for mb in report["server_memory_mb"]), report


def test_a_student_server_after_the_last_lesson(hub):
    """What one student costs after the course's last lesson (lesson 13 now; the capstone
    MLP, lesson 10, was last once): the server's memory and start-up time, for sizing a
    Hub. Its outputs must match too."""
    notebook = json.loads(LAST_LESSON.read_text())
    session = _serve(hub, "last", notebook)
    cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    # As nbval does: a cell marked NBVAL_IGNORE_OUTPUT (measured times) runs, unread.
    compared = [i for i, cell in enumerate(cells)
                if "NBVAL_IGNORE_OUTPUT" not in "".join(cell["source"])]
    expected = [comparable(cells[i].get("outputs", [])) for i in compared]
    got = [comparable(session["outputs"][i]) for i in compared]
    assert got == expected
    report = {"lesson": LAST_LESSON.name,
              "server_start_s": session["server_start_s"], "lesson_s": session["lesson_s"],
              "server_memory_mb": round(session["memory_mb"])}
    out = REPO / "test-output" / "hub"
    out.mkdir(parents=True, exist_ok=True)
    (out / "last_lesson.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"\none student after the last lesson: {report}")
    assert report["server_memory_mb"] > 100, report
