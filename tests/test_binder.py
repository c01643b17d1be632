"""The Binder set-up (binder/) installs the course the way repo2docker would.

repo2docker cannot run here (it needs Docker), so these tests check what it would
read and run its pip step: ``pip install -r binder/requirements.txt`` from the
repository root, in a fresh virtual environment, then import teachgrad from there
and find JupyterLab and the lessons' packages.
"""
import pathlib
import re
import subprocess
import sys
import sysconfig

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"


def test_binder_folder_holds_only_files_repo2docker_reads():
    known = {"requirements.txt", "apt.txt", "postBuild", "runtime.txt", "environment.yml"}
    assert {p.name for p in BINDER.iterdir()} <= known
    post_build = BINDER / "postBuild"
    if post_build.exists():   # repo2docker runs it as a script: it must stop on errors
        lines = post_build.read_text().splitlines()
        assert lines[0].startswith("#!") and "set -e" in "\n".join(lines[:5])


def test_apt_txt_names_debian_packages_and_brings_dot():
    names = [line.strip() for line in (BINDER / "apt.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", name) for name in names), names
    assert "graphviz" in names     # tg.viz.draw renders with Graphviz's `dot`


def test_requirements_install_teachgrad_with_the_lab_extra():
    lines = [line.strip() for line in (BINDER / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert "-e .[lab]" in lines


def test_pip_step_of_repo2docker_installs_the_course(tmp_path):
    """Run repo2docker's pip step in a fresh venv.

    To keep this quick, the fresh venv sees the test venv's packages through a
    ``.pth`` file, so pip finds JupyterLab and the rest already there; it still
    reads binder/requirements.txt from the repository root, resolves ``-e .[lab]``
    there and installs teachgrad itself into the fresh venv (fetching setuptools
    for the build, as repo2docker's pip would).
    """
    venv = tmp_path / "binder-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (pathlib.Path(site) / "_test_venv_packages.pth").write_text(sysconfig.get_path("purelib") + "\n")

    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", "-r", "binder/requirements.txt"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr

    probe = ("import teachgrad, sklearn, tqdm, matplotlib, jupyterlab, ipywidgets; "
             "print(teachgrad.__file__)")
    found = subprocess.run([str(python), "-c", probe], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert pathlib.Path(found) == ROOT / "teachgrad" / "__init__.py"   # editable
    listed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "list",
                             "--path", site, "--format", "freeze"],
                            capture_output=True, text=True, check=True).stdout
    assert "teachgrad==" in listed                  # installed into the fresh venv itself


def test_post_build_puts_the_student_edition_in_the_image(tmp_path):
    """Run binder/postBuild as repo2docker would, on a copy of what it reads, with a
    fresh venv's ``python`` first on PATH (so the nbgrader config it installs lands in
    that venv): the lessons become their student edition, the students' nbgrader gets
    the course's config, and the git history is left out."""
    import shutil
    repo = tmp_path / "repo"
    for folder in ("binder", "course", "notebooks", "scripts", "teachgrad"):
        shutil.copytree(ROOT / folder, repo / folder)     # scripts/ run teachgrad.course
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    (repo / ".git").mkdir()
    venv = tmp_path / "image-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (pathlib.Path(site) / "_test_venv_packages.pth").write_text(
        sysconfig.get_path("purelib") + "\n")
    env = dict(__import__("os").environ, REPO_DIR=str(repo),
               PATH=f"{venv / 'bin'}:/usr/bin:/bin")
    done = subprocess.run(["bash", "binder/postBuild"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for lesson in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        student = (repo / "notebooks" / lesson.name).read_text()
        assert "BEGIN SOLUTION" not in student and '"widgets"' not in student, lesson.name
        assert "write your answer here, then run this cell again" in student, lesson.name
    assert (venv / "etc" / "jupyter" / "nbgrader_config.py").exists()
    assert not (repo / ".git").exists() and not (repo / "build").exists()
