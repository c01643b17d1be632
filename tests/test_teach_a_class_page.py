"""The "Teach a class" page's configuration is real: its YAML parses with the keys
zero-to-jupyterhub reads, it names the image its repo2docker command builds from
binder/, and the lesson it opens exists; its TLJH steps give students the student
edition and nbgrader's exchange; its instructor's nbgrader commands run as written."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "teach-a-class.md"


def _blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(), flags=re.S)


def _z2jh_config():
    (config,) = [yaml.safe_load(block) for block in _blocks("yaml")]
    return config


def _built_image():
    """The image the page's repo2docker command builds, as (name, tag)."""
    for block in _blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            command = shlex.split(line, comments=True)
            if command and command[0] == "jupyter-repo2docker":
                break
        else:
            continue
        assert command[-1] == ".", "repo2docker builds the repository root (binder/)"
        name, tag = command[command.index("--image-name") + 1].rsplit(":", 1)
        return name, tag
    raise AssertionError("no repo2docker command on the page")


def test_the_z2jh_config_runs_the_image_built_from_binder():
    config = _z2jh_config()
    image = config["singleuser"]["image"]
    assert (image["name"], str(image["tag"])) == _built_image()
    assert (REPO / "binder" / "requirements.txt").exists()
    assert "graphviz" in (REPO / "binder" / "apt.txt").read_text()


def test_the_z2jh_config_opens_a_lesson_that_exists_and_culls_idle_servers():
    config = _z2jh_config()
    url = config["singleuser"]["defaultUrl"]
    assert url.startswith("/lab/tree/notebooks/")
    assert (REPO / url.removeprefix("/lab/tree/")).exists(), url
    assert config["cull"]["enabled"] is True and config["cull"]["timeout"] > 0
    memory = config["singleuser"]["memory"]
    assert memory["guarantee"].endswith("M") and memory["limit"].endswith("G")


def test_the_tljh_steps_install_what_binder_installs():
    tljh = next(b for b in _blocks("sh") if "tljh-config" in b)
    assert "binder/requirements.txt" in tljh
    for package in (REPO / "binder" / "apt.txt").read_text().split():
        assert package in tljh


def _sh_lines(block):
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines()
            if shlex.split(line, comments=True)]


def test_the_image_holds_the_repository_where_the_z2jh_config_copies_the_lessons_from():
    (command,) = [c for b in _blocks("sh") for c in _sh_lines(b)
                  if c[0] == "jupyter-repo2docker"]
    repo_dir = command[command.index("--target-repo-dir") + 1]
    singleuser = _z2jh_config()["singleuser"]
    copy = " ".join(singleuser["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert f"cp -rn {repo_dir}/notebooks" in copy          # -n: a student's work stays
    assert singleuser["notebookDir"] == "/home/jovyan"
    mounts = singleuser["storage"]["extraVolumeMounts"]
    exchange = re.search(r'c.Exchange.root = "(.*)"',
                         (REPO / "course" / "nbgrader_config.py").read_text()).group(1)
    assert [m["mountPath"] for m in mounts] == [exchange]


def test_the_tljh_steps_give_students_the_student_edition_and_nbgraders_exchange():
    tljh = next(b for b in _blocks("sh") if "tljh-config" in b)
    commands = [" ".join(c) for c in _sh_lines(tljh)]
    assert "sudo -E python scripts/student_edition.py /etc/skel/notebooks" in commands
    assert not any("cp -r" in c and "/etc/skel" in c for c in commands)   # never the solutions
    assert "sudo mkdir -p /srv/nbgrader/exchange" in commands
    assert "sudo cp course/nbgrader_config.py /opt/tljh/user/etc/jupyter/" in commands
    assert (REPO / "course" / "nbgrader_config.py").exists()


def test_the_instructors_nbgrader_commands_run_as_the_page_gives_them(tmp_path):
    """The "Handing out exercises" commands, run here: the course directory is laid out,
    lesson 1 is generated and released, with the venv's programs called by their path and
    the venv not on PATH (nbgrader's gradebook then needs course/nbgrader_config.py to find
    ``alembic``). Only the exchange moves, into tmp_path."""
    block = next(b for b in _blocks("sh") if "generate_assignment" in b)
    bin_dir = Path(sys.executable).parent
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != str(bin_dir))
    cwd = tmp_path
    for command in _sh_lines(block):
        command = [word.replace("/srv/teachgrad", str(REPO)).replace("~/course",
                   str(tmp_path / "course")) for word in command]
        if command[0] == "cd":
            cwd = Path(command[1])
            continue
        program = sys.executable if command[0] == "python" else str(bin_dir / command[0])
        extra = [f"--Exchange.root={tmp_path / 'exchange'}"] if command[0] == "nbgrader" else []
        done = subprocess.run([program, *command[1:], *extra], cwd=cwd, capture_output=True,
                              text=True, timeout=300, env=dict(os.environ, PATH=path))
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    released = tmp_path / "exchange" / "teachgrad" / "outbound" / "01_derivatives_on_a_tape"
    student = json.loads((released / "01_derivatives_on_a_tape.ipynb").read_text())
    assert "widgets" not in student["metadata"]
    assert "BEGIN SOLUTION" not in json.dumps(student["cells"])
