"""An unasked command's programs read its options as the allowlist read them (SPEC §9).

The allowlist reads every `-x` word as an option, wherever it stands, as GNU getopt does by default: `head README.md
-n5` is head's `-n 5`. With `POSIXLY_CORRECT` in the user's environment (some set it for shell scripting, `set -o
posix` users export it) getopt stops at the first operand, and every word after it is a file name. A clone commits a
directory named `-n5` (or `--lines=5`, `-f1`), and `head README.md -n5/../../../secret.txt` was judged as head's
`-n` with the value `5/../../../secret.txt`, while head opened that path: a file outside the project, read unasked,
inside the read-only sandbox too (it hides nothing of the file system from reading). `uniq`'s second operand is the
file it writes: `uniq README.md -f1/../../../pwned` wrote outside the project where bubblewrap cannot run. Unasked
commands now run without `POSIXLY_CORRECT`, with the option reading they were judged by; an approved command keeps
it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.agent.permissions import PermissionGate, Policy
from evo_agent.tools import sandbox as sandbox_module
from evo_agent.tools.confine import real
from evo_agent.tools.shell_allowlist import GIT_SUBCOMMANDS, PROGRAMS
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, unasked_environment
from tests.builders import make_agent, server_provider
from tests.fake_model_server import text, tool_use
from tests.helpers import QuietFront

from .hostile import clone, upstream

SECRET = "TOP-SECRET-d41d8cd98f00b204"
# Directories the clone commits, named like options that take a value: getopt's reading makes the rest the value.
OPTION_DIRS = ["-n5", "--lines=5", "-c9", "--bytes=9", "-f1", "--skip-fields=1", "-s2", "-e", "--regexp=x", "-d:",
               "-k1"]
READS = [
    "head README.md -n5/../../../secret.txt", "head README.md --lines=5/../../../secret.txt",
    "tail README.md -c9/../../../secret.txt", "tail README.md --bytes=9/../../../secret.txt",
    "nl README.md -s2/../../../secret.txt", "grep -h TOP README.md -e/../../../secret.txt",
    "grep -h SECRET README.md --regexp=x/../../../secret.txt", "cut -c1- README.md -d:/../../../secret.txt",
    "sort README.md -k1/../../../secret.txt",
]
WRITES = ["uniq README.md -f1/../../../pwned", "uniq README.md --skip-fields=1/../../../pwned",
          "uniq -c README.md -s2/../../../pwned"]



def _hostile(tmp_path: Path) -> Path:
    """A clone committing the option-named directories, two levels below a secret the user keeps next to it."""
    (tmp_path / "secret.txt").write_text(f"{SECRET}\n")
    files = {f"{name}/keep": "" for name in OPTION_DIRS}
    return clone(upstream(tmp_path, files), tmp_path / "src" / "clone")


def _no_sandbox(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As where bubblewrap cannot run. (Where it runs, the read-only sandbox hides only /tmp, /run and the user's
    evo-agent config: `~/.ssh` is read as here, but the test's secret lives under /tmp.)"""
    monkeypatch.setitem(sandbox_module._read_only, str(real(project)), None)


def _unasked(project: Path, model_server, command: str) -> dict:
    """The model's `command` through the agent in ask mode with nobody to ask: the tool_result it gets."""
    model_server.script(tool_use("bash", {"command": command}, id="toolu_x"), text("done"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask",
                          permissions=PermissionGate(Policy(project, "ask")))
    agent.run_turn("go", QuietFront())
    return model_server.requests[-1]["messages"][-1]["content"][0]


@pytest.mark.parametrize("command", READS)
def test_an_option_after_an_operand_never_becomes_a_path_out_of_the_project(tmp_path, model_server, monkeypatch,
                                                                            command):
    project = _hostile(tmp_path)
    monkeypatch.setenv("POSIXLY_CORRECT", "1")
    _no_sandbox(project, monkeypatch)
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan  # judged read-only: each word after README.md an option
    result = _unasked(project, model_server, command)
    assert SECRET not in result["content"], result["content"]


def test_control_posix_option_reading_opens_the_path(tmp_path):
    """The payload is real: the same checked command, with POSIXLY_CORRECT, prints the secret."""
    project = _hostile(tmp_path)
    plan = plan_read_only(READS[0], project)
    assert isinstance(plan, ReadOnlyPlan)
    ran = subprocess.run(["bash", "-c", plan.command], cwd=project, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PATH": plan.path, "POSIXLY_CORRECT": "1"})
    assert SECRET in ran.stdout


@pytest.mark.parametrize("command", WRITES)
def test_uniq_never_writes_outside_where_bubblewrap_cannot_run(tmp_path, model_server, monkeypatch, command):
    project = _hostile(tmp_path)
    monkeypatch.setenv("POSIXLY_CORRECT", "1")
    _no_sandbox(project, monkeypatch)
    _unasked(project, model_server, command)
    assert not (tmp_path / "pwned").exists()
    subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, timeout=60,
                   env={**os.environ, "POSIXLY_CORRECT": "1"})
    assert (tmp_path / "pwned").exists()  # the control: plain uniq writes there


@pytest.mark.parametrize("command", ["head -n 1 README.md", "head README.md -n 1", "grep -c normal README.md",
                                     "uniq README.md -c"])
def test_reads_still_run_unasked_with_the_users_posixly_correct(tmp_path, model_server, monkeypatch, command):
    project = _hostile(tmp_path)
    monkeypatch.setenv("POSIXLY_CORRECT", "1")
    result = _unasked(project, model_server, command)
    assert not result.get("is_error"), result["content"]
    assert "normal" in result["content"] or result["content"].startswith("1\n"), result["content"]
    assert not (project / "-c").exists()


@pytest.mark.parametrize("command", ["tail +1f README.md", "tail +0f README.md", "tail +1lf README.md",
                                     "tail +1cf README.md", "tail +f README.md", "tail +1bf README.md",
                                     "tail -cf README.md", "tail -cf", "tail -cf -- README.md",
                                     "cat README.md | tail -cf"])
def test_tails_obsolete_follow_never_runs_unasked(project, model_server, command):
    """`tail +1f FILE` is tail's obsolete spelling of `-n +1 -f` (coreutils reads a first word `+N[bcl][f]` so),
    not a file named `+1f`: it follows the file and never ends, as `tail -f`, which asks. So is `-cf` (getopt's
    `-c f`, judged a count): coreutils reads a first word `-[N][bcl]f` the same way, even without POSIXLY_CORRECT."""
    model_server.script(tool_use("bash", {"command": command, "timeout": 5}, id="toolu_x"), text("done"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask",
                          permissions=PermissionGate(Policy(project, "ask")))
    agent.run_turn("go", QuietFront())
    result = model_server.requests[-1]["messages"][-1]["content"][0]
    assert "timed out" not in result["content"] and "Not run" in result["content"], result["content"]


@pytest.mark.parametrize("command", ["tail -n +2 README.md", "tail -n+2 README.md", "tail --lines=+1 README.md",
                                     "tail -1 README.md", "tail README.md +notes.txt"])
def test_tail_from_a_line_still_runs_unasked(project, command):
    (project / "+notes.txt").write_text("notes\n")
    assert isinstance(plan_read_only(command, project), ReadOnlyPlan)


def _grep_reads_grep_options() -> bool:
    """Whether this grep takes options from GREP_OPTIONS (GNU grep before 3.6, BSD grep)."""
    ran = subprocess.run(["grep", "x", "/dev/null"], capture_output=True, text=True,
                         env={**os.environ, "GREP_OPTIONS": "-c"})
    return ran.stdout.strip() == "0"


def test_unasked_commands_get_neither_variable():
    env = unasked_environment({"POSIXLY_CORRECT": "1", "GREP_OPTIONS": "-R", "PATH": "/usr/bin", "LANG": "C.UTF-8"})
    assert env == {"PATH": "/usr/bin", "LANG": "C.UTF-8"}


@pytest.mark.skipif(not _grep_reads_grep_options(), reason="this grep ignores GREP_OPTIONS (GNU grep 3.6 and later)")
def test_grep_options_never_make_grep_follow_links_out(tmp_path, model_server, monkeypatch):
    project = clone(upstream(tmp_path, {"docs/a.txt": "a\n"}, links={"docs/out": "../../../outside"}),
                    tmp_path / "src" / "clone")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(f"{SECRET}\n")
    monkeypatch.setenv("GREP_OPTIONS", "-R")
    _no_sandbox(project, monkeypatch)
    result = _unasked(project, model_server, "grep -r TOP docs")
    assert SECRET not in result["content"], result["content"]


# ---------------------------------------------------------------- the property: every listed option, any order

_VALUES = ["5", "x", "TOP", "../../secret.txt", "out/secret.txt", "sec", "src", ".", "-", "README.md", "+1"]
# Words naming the secret through each option-named directory: an option to GNU getopt's default reading, a path
# to POSIXLY_CORRECT's (after an operand).
_THROUGH_DIRS = [f"{name}/../../../secret.txt" for name in OPTION_DIRS]
_OPERANDS = ["README.md", "src", ".", "out", "sec", "out/secret.txt", "../../secret.txt", "src/app.txt", "--", "-"]


@st.composite
def _listed_words(draw) -> str:
    """A command of the allowlist with options from its own list (every spelling: `--x=v`, `--x v`, `-xv`, `-x v`)
    and operands, in any order: what the allowlist judges, however the program reads it."""
    name = draw(st.sampled_from([*sorted(PROGRAMS), *[f"git {sub}" for sub in sorted(GIT_SUBCOMMANDS)]]))
    spec = GIT_SUBCOMMANDS[name[4:]] if name.startswith("git ") else PROGRAMS[name]
    words = [name]
    for _ in range(draw(st.integers(0, 4))):
        options = [("--", n, k) for n, k in spec.long.items()] + [("-", n, k) for n, k in spec.short.items()]
        if options and draw(st.booleans()):
            dash, option, kind = draw(st.sampled_from(options))
            value = draw(st.sampled_from(_VALUES))
            joined = draw(st.booleans())
            if kind in ("text", "path"):
                words += [f"{dash}{option}{'=' if dash == '--' else ''}{value}"] if joined else [f"{dash}{option}", value]
            elif kind in ("optional", "attached") and joined:
                words.append(f"{dash}{option}{'=' if dash == '--' else ''}{value}")
            else:
                words.append(f"{dash}{option}")
        else:
            words.append(draw(st.sampled_from(_OPERANDS + _THROUGH_DIRS)))
    if draw(st.booleans()):  # an operand, then a word through a directory: where the two readings part
        words += [draw(st.sampled_from(["README.md", "src/app.txt", "-"])), draw(st.sampled_from(_THROUGH_DIRS))]
    return " ".join(shlex.quote(w) for w in words)


@pytest.fixture(scope="module")
def armed(tmp_path_factory) -> Path:
    """The hostile clone of this module (option-named directories, links out to the secret next to it)."""
    tmp_path = tmp_path_factory.mktemp("armed")
    (tmp_path / "secret.txt").write_text(f"{SECRET}\n")
    files = {f"{name}/keep": "" for name in OPTION_DIRS} | {"src/app.txt": "TOP app\n"}
    origin = upstream(tmp_path, files, links={"out": "../..", "sec": "../../secret.txt"})
    return clone(origin, tmp_path / "src" / "clone")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=_listed_words(), posix=st.booleans())
def test_no_listed_command_reads_out_or_writes_in_any_option_order(armed, command, posix):
    """Run as the bash tool runs an unasked command where bubblewrap cannot (the plan, its environment, no sandbox),
    with or without the user's POSIXLY_CORRECT: nothing outside the project is printed, nothing is written."""
    plan = plan_read_only(command, armed)
    if isinstance(plan, str):
        return
    env = unasked_environment({**os.environ, **({"POSIXLY_CORRECT": "1"} if posix else {})}, armed)
    before = _tree(armed.parent.parent)
    ran = subprocess.run(["bash", "-c", plan.command], cwd=armed, stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=20, env={**env, "PATH": plan.path})
    written = _tree(armed.parent.parent) - before
    for path in written:  # (each example starts from the same tree)
        Path(path).unlink()
    assert SECRET not in ran.stdout + ran.stderr, command
    assert not written, command


def _tree(top: Path) -> set[str]:
    return {str(p) for p in top.rglob("*") if ".git" not in p.parts}
