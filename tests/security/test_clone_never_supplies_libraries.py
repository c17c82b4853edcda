"""No library a clone commits is loaded into a program evo-agent starts, nor into evo-agent's code (SPEC §9).

`export LD_LIBRARY_PATH=/opt/x/lib:$LD_LIBRARY_PATH` with the variable unset leaves `/opt/x/lib:`, whose empty entry
the dynamic loader reads as "the directory the program runs in", before the system's own directories; a relative
entry (`lib`, `.`) is read the same way. In a clone that commits `libz.so.1`, `libpcre2-8.so.0`, `libselinux.so.1`,
`libtinfo.so.6`, ... (each a real library with a constructor), evo-agent's own git read at start-up, the sandbox's
bwrap (outside the sandbox), the reaper's setpriv and bash, every command run unasked, and evo-agent's own Python
(`import ssl` loads libssl.so.3) ran the clone's code before anything was asked. As with PATH
(test_clone_never_supplies_programs.py), such entries no longer count: evo-agent starts again without them, and
what it starts unasked gets no entry inside the project either. Out of reach: the libraries the interpreter's own
binary links (Debian's python3 links libz.so.1), loaded before any Python runs; the test plants those only
where the interpreter does not link them.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, unasked_environment
from tests.cli_runner import Cli, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, git, upstream

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler to build the planted libraries")

SYSTEM_LIBS = "/lib/x86_64-linux-gnu"
LIBRARIES = ("libz.so.1", "libpcre2-8.so.0", "libselinux.so.1", "libcap.so.2", "libcap-ng.so.0", "libtinfo.so.6",
             "libssl.so.3", "libcrypto.so.3", "libffi.so.8")
MARKER_VAR = "EVO_TEST_LIBRARY_MARKER"
SOURCE = f"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {{
    const char *marker = getenv("{MARKER_VAR}");
    if (marker) {{ int fd = open(marker, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }}
}}
"""
COMMANDS = ["git status", "grep -rn needle .", "rg -n needle", "git log --oneline", "cat notes.txt"]


@pytest.fixture(scope="module")
def planted_libraries(tmp_path_factory):
    """Each library a real one's filter (its symbols come from the system's) plus a constructor leaving a marker."""
    out = tmp_path_factory.mktemp("libs")
    (out / "planted.c").write_text(SOURCE)
    built = {}
    for name in LIBRARIES:
        system = os.path.join(SYSTEM_LIBS, name)
        if not os.path.exists(system):
            continue
        made = subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out / name), str(out / "planted.c"),
                               f"-Wl,--filter={system}", f"-Wl,-soname,{name}"], capture_output=True, timeout=60)
        if made.returncode == 0:
            built[name] = (out / name).read_bytes()
    if not built:
        pytest.skip("the planted libraries cannot be built here")
    return built


def _armed_clone(tmp_path, libraries):
    files = {"notes.txt": "the needle\n", "src/app.txt": "the needle\n"}
    for name, data in libraries.items():
        files[name] = data
        files[f"lib/{name}"] = data
    origin = upstream(tmp_path, files)
    assert git(origin, "log", "--oneline").returncode == 0
    return clone(origin, tmp_path / "src" / "clone")


def _spellings(project) -> list[str]:
    """LD_LIBRARY_PATH values that send the loader to the project: empty entries, relative ones, the project."""
    return ["/opt/none:", ":/opt/none", "/opt/none::/usr/lib", ".", "lib", "./lib", ":", "/opt/none;",
            "/opt/none;lib", "$LIB", str(project), f"{project}/lib"]


def test_control_the_planted_libraries_are_live(tmp_path, planted_libraries):
    project = _armed_clone(tmp_path, planted_libraries)
    marker = tmp_path / "pwned"
    subprocess.run(["git", "status"], cwd=project, capture_output=True, timeout=60,
                   env={**os.environ, "LD_LIBRARY_PATH": "/opt/none:", MARKER_VAR: str(marker)})
    assert marker.exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_run_unasked_never_loads_a_library_of_the_project(tmp_path, planted_libraries, command):
    """Without the sandbox (where bubblewrap cannot run): the plan, in the environment the bash tool gives it."""
    project = _armed_clone(tmp_path, planted_libraries)
    marker = tmp_path / "pwned"
    for spelling in _spellings(project):
        plan = plan_read_only(command, project)
        assert isinstance(plan, ReadOnlyPlan), plan
        env = unasked_environment({**os.environ, "LD_LIBRARY_PATH": spelling, MARKER_VAR: str(marker)}, project)
        env["PATH"] = plan.path
        ran = subprocess.run(["bash", "-c", plan.command], cwd=project, capture_output=True, text=True, timeout=60,
                             env=env)
        assert "needle" in ran.stdout or command.startswith("git"), ran.stderr
        assert not marker.exists(), spelling


def _linked_by_the_interpreter() -> set[str]:
    """The libraries `sys.executable` itself links (`ldd`): loaded before any of evo-agent's code runs."""
    import sys

    listed = subprocess.run(["ldd", os.path.realpath(sys.executable)], capture_output=True, text=True, timeout=30)
    return {line.split()[0] for line in listed.stdout.splitlines() if line.strip()}


@pytest.mark.parametrize("spelling", ["/opt/none:", ":", "lib", "./lib", "/opt/none;", "/opt/none;."])
def test_through_the_agent_nothing_loads_a_library_of_the_project(tmp_path, model_server, planted_libraries,
                                                                  spelling):
    """The whole path: evo-agent starts in the clone (its own git reads), the model's commands run unasked (the
    reaper, bwrap outside the sandbox, bash, git, grep inside), and evo-agent itself talks HTTP (ssl, zlib)."""
    linked = _linked_by_the_interpreter()
    project = _armed_clone(tmp_path, {name: data for name, data in planted_libraries.items() if name not in linked})
    marker = tmp_path / "pwned"
    model_server.script(tool_use("bash", {"command": "git status && grep -rn needle src"}, id="t1"), text("done"))
    env = model_server.env(clean_env(tmp_path / "home", LD_LIBRARY_PATH=spelling, **{MARKER_VAR: str(marker)}))
    result = Cli(project, env).run("-p", "find the needle")
    assert result.rc == 0, result.err
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert "src/app.txt" in content, content
    assert not marker.exists()


def test_a_python_path_entry_never_imports_a_module_of_the_project(tmp_path, model_server):
    """`PYTHONPATH=/opt/x:` (the same `export` with the variable unset) puts the project ahead of the standard
    library: a committed `json.py` ran inside evo-agent. evo-agent starts again without such entries."""
    marker = tmp_path / "pwned"
    planted = f"import os\nopen({str(marker)!r}, 'w').close()\nfrom importlib import import_module\n"
    project = clone(upstream(tmp_path, {"json.py": planted, "shlex.py": planted, "notes.txt": "the needle\n"}),
                    tmp_path / "src" / "clone")
    import sys

    subprocess.run([sys.executable, "-c", "import json"], cwd=project, capture_output=True, timeout=30,
                   env={**os.environ, "PYTHONPATH": "/opt/none:"})
    assert marker.exists()  # the control: Python imports the clone's json.py
    marker.unlink()
    for spelling in ("/opt/none:", ":/opt/none", ".", "/opt/none::/usr/lib"):
        model_server.script(tool_use("bash", {"command": "grep -n needle notes.txt"}, id="t1"), text("done"))
        env = model_server.env(clean_env(tmp_path / "home", PYTHONPATH=spelling))
        result = Cli(project, env).run("-p", "find the needle")
        assert result.rc == 0, result.err
        assert not marker.exists(), spelling


@pytest.mark.parametrize("marked", [False, True])
def test_evo_agent_starts_again_once_at_most(tmp_path, marked):
    """The restart happens once: a wrapper that puts a relative entry back on every start (or a marker already
    set) must not make it start itself again and again; what it runs then still lacks the entry."""
    import sys

    runs = tmp_path / "runs"
    code = (f"import os; open({str(runs)!r}, 'a').write('start' + chr(10)); "
            f"from evo_agent.cli.startup_env import clean_start; clean_start(); "
            f"open({str(runs)!r}, 'a').write(repr(os.environ.get('LD_LIBRARY_PATH')) + chr(10))")
    env = {**os.environ, "LD_LIBRARY_PATH": "/opt/none:"}
    if marked:
        env["EVO_AGENT_RESTARTED_CLEAN"] = "1"
    subprocess.run([sys.executable, "-c", code], env=env, timeout=60, check=True)
    assert runs.read_text().splitlines() == ["start"] * (1 if marked else 2) + ["'/opt/none'"]
