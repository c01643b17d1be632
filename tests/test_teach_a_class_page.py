"""The "Teach a class" page's configuration is real: its YAML parses with the keys
zero-to-jupyterhub reads, it names the image its repo2docker command builds from
binder/, and the lesson it opens exists."""
import re
import shlex
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
