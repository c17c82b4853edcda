"""What runs unasked cannot write (issue #26): the allowlist, tried the way an attacker would.

Each trick is tried in several spellings against a hostile repository built in the test, through
the real agent loop in `ask` mode without anyone to ask (print mode): the call must be refused
and its payload's effect absent. Where it helps, a control runs the same command with plain bash
to show the payload is real.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.agent.events import Notice, Retrying, TurnEvent
from evo_agent.agent.rules import parse_rules
from evo_agent.tools.shell_allowlist import PROGRAMS
from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only, read_only_reason
from tests.builders import make_agent, server_provider
from tests.fake_model_server import text, tool_use
from tests.security.partial_clone import LAZY_FETCH_SPELLINGS, filter_named, partial_clone, submodule_with_filter

HAS_RG = shutil.which("rg") is not None


class Quiet:
    """A front end that cannot ask (print mode) and keeps its notices."""

    def __init__(self) -> None:
        self.notices: list[str] = []

    def on_event(self, event: TurnEvent) -> None:
        if isinstance(event, Notice | Retrying):
            self.notices.append(event.text)


def run_as_model(project: Path, model_server, command: str, mode: str = "ask", rules: str = "") -> dict:
    """The model asks for `command`; the tool_result it gets back."""
    from evo_agent.agent.permissions import PermissionGate, Policy

    model_server.script(tool_use("bash", {"command": command}, id="toolu_x"), text("done"))
    gate = PermissionGate(Policy(project, mode, parse_rules(rules)))
    agent, _ = make_agent(project, server_provider(model_server), mode=mode, permissions=gate)
    agent.run_turn("go", Quiet())
    return model_server.requests[-1]["messages"][-1]["content"][0]


def plain_bash(command: str, project: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, timeout=30,
                          env={**os.environ, **env})


# --------------------------------------------------------------------------- abbreviations


@pytest.mark.parametrize("command", [
    "sort --outp .git/config README.md", "sort --output=.git/config README.md", "sort --o .git/config README.md",
    "sort -o.git/config README.md", "sort -uo .git/config README.md", "sort -o .evo-agent/settings.json README.md",
    "sort --outp .evo-agent/settings.json README.md", "sort --ou=.git/config README.md",
])
def test_sort_never_writes_unasked_in_any_spelling(project, model_server, command):
    (project / ".evo-agent").mkdir(exist_ok=True)
    settings_file = project / ".evo-agent" / "settings.json"
    settings_file.write_text('{"permissions": {"allow": []}}')
    config_before = (project / ".git" / "config").read_bytes()
    result = run_as_model(project, model_server, command)
    assert result["is_error"] and "Not run" in result["content"]
    assert (project / ".git" / "config").read_bytes() == config_before
    assert settings_file.read_text() == '{"permissions": {"allow": []}}'
    control = project / "victim.txt"
    plain_bash(command.split(" ", 1)[0] + " --outp victim.txt README.md", project)
    assert control.exists()  # GNU sort takes the abbreviation: the payload is real


@pytest.mark.parametrize("command", [
    "sort --com=sh README.md", "sort --compress-prog=sh README.md", "sort --compress-program sh README.md",
    "grep --der secret .", "grep --dereference-r secret .", "grep -R secret .", "grep -rR secret .",
    "tail -f README.md", "tail --fo README.md", "rg --pr sh x", "rg --pre=sh x", "rg -z x", "rg --search-z x",
    "rg -L x", "rg --fol x", "find . -fprint x", "find . -fprintf x y", "find . -fls x", "find -L .",
    "find . -exec touch x ;", "find . -execdir touch x +", "find . -ok rm {} ;", "find . -delete",
    "git diff --outp=x", "git diff --output x", "git log --ext-d", "git show --textc", "git diff --no-index a b",
    "git log --show-signature", "git -c core.pager=sh log", "git --no-pager log", "git -C .. log",
    "git branch evil", "git config core.fsmonitor x", "git status --porcelain --untracked=all -- x; touch y",
    "wc --files0-from=/etc/passwd", "wc --files0=list", "ls --dereference", "ls -L x", "cat --help=x",
    "stat --printf=%n /etc/passwd", "cut -f1 /etc/passwd", "uniq README.md out.txt", "du -sh .", "diff a b",
    "file -C -m magic", "sort -T /tmp x", "sort --temporary-directory=x y", "sort --files0-from=x",
    "sort --random-source=/dev/urandom x", "head -n 5 /etc/passwd", "grep -f /etc/passwd x", "grep --file /etc/shadow x",
    "rg --ignore-file=/etc/passwd x", "find . -newer /etc/passwd", "find / -name x", "echo hi | tee x",
])
def test_unlisted_or_writing_options_ask(project, command):
    assert read_only_reason(command, project) is not None


READ_ONLY = ["ls", "ls -la src", "ls -1 --color=never", "pwd", "git status", "git status -s", "git status -uno",
             "git log --oneline -5", "git log -n 3 --stat", "git diff HEAD~1", "git diff --cached --name-only",
             "git show HEAD", "git show --stat HEAD", "cat README.md", "head -n 5 README.md | wc -l", "head -5 README.md",
             "tail -n 20 README.md", "grep -rn foo .", "grep -rn -e foo -- .", "grep -c foo README.md",
             "egrep 'a|b' README.md", "rg -n foo", "rg -n -g '*.py' foo .", "rg --files", "find . -name '*.py'",
             "find . -type f -newer README.md", "echo hello", "echo *", "cat README.md && git status",
             "sort README.md | uniq -c", "cut -d: -f1 README.md", "wc -l README.md", "stat README.md",
             "nl README.md", "printf '%s' x", "basename a/b", "true", "ls src | sort -r | head -3"]


@pytest.mark.parametrize("command", READ_ONLY)
def test_common_read_only_commands_still_run_unasked(project, command):
    (project / "src").mkdir(exist_ok=True)
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan


# --------------------------------------------------------------------------- globs into options


def _pre_sh_repo(project: Path, marker: Path) -> None:
    (project / "--pre=sh").write_text("")
    (project / "notes.txt").write_text(f"touch {marker}\n# TODO\n")


@pytest.mark.parametrize("command", ["rg -n TODO *", "rg TODO -- *", "rg -n TODO ./*", "rg TODO *.txt *",
                                     "rg -n TODO [-n]*", "rg -n TODO -?pre*"])
def test_a_file_named_like_an_option_never_becomes_one(project, model_server, tmp_path, command):
    marker = tmp_path / "pwned"
    _pre_sh_repo(project, marker)
    result = run_as_model(project, model_server, command)
    assert not marker.exists(), result
    if command == "rg -n TODO ./*":  # `./--pre=sh` is a path, not an option: it may run, harmlessly
        return
    assert result["is_error"] and "option-like" in result["content"]


@pytest.mark.skipif(not HAS_RG, reason="ripgrep is not installed: the control cannot show the payload")
def test_control_plain_bash_runs_the_pre_sh_payload(project, tmp_path):
    marker = tmp_path / "pwned"
    _pre_sh_repo(project, marker)
    plain_bash("rg -n TODO *", project)
    assert marker.exists()


@pytest.mark.parametrize("command", ["sort *", "sort -- *", "cat * | sort", "sort -r *.txt *"])
def test_a_glob_cannot_give_sort_an_output_file(project, model_server, command):
    (project / "--output=victim.txt").write_text("")
    (project / "a.txt").write_text("b\na\n")
    result = run_as_model(project, model_server, command)
    assert result["is_error"] and not (project / "victim.txt").exists()


def test_what_runs_is_the_expansion_not_the_pattern(project):
    (project / "a.txt").write_text("")
    (project / "b b.txt").write_text("")
    (project / ".hidden.txt").write_text("")
    plan = plan_read_only("cat *.txt", project)
    assert shlex.split(plan.command)[1:] == ["a.txt", "b b.txt"]  # quoted, sorted, no dot file: as bash does
    assert shlex.split(plan_read_only("cat '*.txt'", project).command)[1:] == ["*.txt"]  # quoted: no expansion
    assert shlex.split(plan_read_only("ls .h*", project).command)[1:] == [".hidden.txt"]
    assert shlex.split(plan_read_only("ls nomatch*", project).command)[1:] == ["nomatch*"]


# --------------------------------------------------------------------------- PATH


def _plant(directory: Path, name: str, marker: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / name
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)


@pytest.mark.parametrize("entry", ["node_modules/.bin", ".", "", "./bin", "{project}/bin"])
def test_a_program_planted_on_a_project_path_entry_never_runs_unasked(project, model_server, tmp_path, monkeypatch,
                                                                       entry):
    marker = tmp_path / "pwned"
    directory = entry.format(project=project) if entry else "."
    _plant(project / directory if not os.path.isabs(directory) else Path(directory), "cat", marker)
    monkeypatch.setenv("PATH", f"{entry.format(project=project)}:{os.environ['PATH']}")
    result = run_as_model(project, model_server, "cat README.md")
    assert not marker.exists() and result["is_error"] and "PATH" in result["content"]


def test_a_system_program_that_calls_another_gets_the_safe_path(project, model_server, tmp_path, monkeypatch):
    """/usr/bin/egrep is `exec grep -E`: a `grep` planted in `.` must not be the one it finds."""
    marker = tmp_path / "pwned"
    _plant(project, "grep", marker)
    monkeypatch.setenv("PATH", f".:{os.environ['PATH']}")
    result = run_as_model(project, model_server, "egrep -c . README.md")
    assert not marker.exists()
    assert not result.get("is_error"), result  # it ran unasked, with the system grep


# --------------------------------------------------------------------------- symlinks and paths


@pytest.mark.parametrize("command", ["grep -r KEY link", "grep -rn KEY link/", "cat link/id_rsa", "cat lin*/id_rsa",
                                     "grep -r KEY . link", "rg KEY link", "find link -name '*'", "ls link/",
                                     "head -c 100 ./link/../link/id_rsa", "cat fi*", "grep -f link/id_rsa x",
                                     "grep --file=link/id_rsa README.md", "cat ~/.ssh/id_rsa", "cat ../outside/id_rsa"])
def test_a_symlink_or_path_out_of_the_project_is_never_read_unasked(project, model_server, tmp_path, command):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE KEY material\n")
    (project / "link").symlink_to(outside)
    (project / "file").symlink_to(outside / "id_rsa")
    result = run_as_model(project, model_server, command)
    assert "PRIVATE" not in result["content"] and result["is_error"]


def test_grep_der_would_follow_a_committed_symlink(project, tmp_path):
    """The control: GNU grep takes `--der` for --dereference-recursive and reads through the link."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("PRIVATE KEY material\n")
    (project / "sub").mkdir()
    (project / "sub" / "link").symlink_to(outside)
    assert "PRIVATE" in plain_bash("grep --der PRIVATE sub", project).stdout
    assert read_only_reason("grep --der PRIVATE sub", project) is not None
    assert isinstance(plan_read_only("grep -r PRIVATE sub", project), ReadOnlyPlan)  # -r skips the link
    assert "PRIVATE" not in plain_bash(plan_read_only("grep -r PRIVATE sub", project).command, project).stdout


# --------------------------------------------------------------------------- git's configuration


def _git_traps(project: Path, marker: Path) -> None:
    hook = project / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    hook.chmod(0o755)
    for key, value in (("core.fsmonitor", str(hook)), ("diff.external", str(hook)), ("core.pager", str(hook)),
                       ("filter.trap.clean", str(hook)), ("diff.trap.textconv", str(hook)),
                       ("log.showSignature", "true"), ("gpg.program", str(hook))):
        subprocess.run(["git", "config", key, value], cwd=project, check=True)
    (project / ".gitattributes").write_text("*.md filter=trap diff=trap\n")
    with open(project / "README.md", "a") as f:
        f.write("changed\n")


@pytest.mark.parametrize("command", ["git status", "git diff", "git log -p -1", "git show HEAD", "git diff HEAD",
                                     "git log --format=%G? -1", "git status --porcelain"])
def test_git_read_commands_never_run_the_repositorys_configuration(project, tmp_path, command):
    marker = tmp_path / "pwned"
    _git_traps(project, marker)
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    subprocess.run(["bash", "-c", plan.command], cwd=project, capture_output=True, timeout=30,
                   env={**os.environ, "PATH": plan.path})  # the plan itself, without the sandbox
    assert not marker.exists()


def test_control_plain_git_status_runs_the_fsmonitor(project, tmp_path):
    marker = tmp_path / "pwned"
    _git_traps(project, marker)
    plain_bash("git status", project)
    assert marker.exists()


def test_git_status_unasked_through_the_agent_leaves_no_trace(project, model_server, tmp_path):
    marker = tmp_path / "pwned"
    _git_traps(project, marker)
    result = run_as_model(project, model_server, "git status")
    assert "README.md" in result["content"] and not marker.exists()


# --------------------------------------------------------------------------- rules say what they mean


@pytest.mark.parametrize("rules, command", [
    ("Bash(find:*)", "find . -fprintf {outside}/pwned %p"),
    ("Bash(find:*)", "find . -delete"),
    ("Bash(find:*)", "find .evo-agen? -delete"),
    ("Bash(find .:*)", "find . -name x -exec touch {outside}/pwned ;"),
    ("Bash(git diff:*)", "git diff --output={outside}/pwned"),
    ("Bash(git diff:*)", "git diff --outp={outside}/pwned"),
    ("Bash(sort:*)", "sort --outp {outside}/pwned README.md"),
    ("Bash(sort:*)", "sort *"),
    ("Bash(rg:*)", "rg -n TODO *"),
    ("Bash(rm:*)", "rm -rf ./.git/../.git/hooks"),
    ("Bash(rm:*)", "rm -rf .evo-agen?/settings.json"),
    ("Bash(rm:*)", "rm -rf gitlink/hooks"),
    ("Bash(touch:*)", "touch .git/hooks/pre-commit"),
    ("Bash", "rm -r .g?t/hooks"),
    ("Bash(cp:*)", "cp README.md .evo-agent/settings.json"),
    ("Bash(cp:*)", "cp README.md sub/../.evo-agent/settings.json"),
])
def test_a_prefix_rule_still_asks_for_writing_options_and_protected_dirs(project, model_server, tmp_path, rules,
                                                                           command):
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "sub").mkdir()
    (project / "--output=victim").write_text("")
    (project / ".git" / "hooks").mkdir(exist_ok=True)
    (project / ".git" / "hooks" / "keep").write_text("x")
    (project / "gitlink").symlink_to(project / ".git")
    (project / ".evo-agent").mkdir(exist_ok=True)
    (project / ".evo-agent" / "settings.json").write_text("{}")
    (project / "notes.txt").write_text(f"touch {outside}/pwned\n")
    (project / "--pre=sh").write_text("")
    before = sorted(p.name for p in project.iterdir())
    result = run_as_model(project, model_server, command.format(outside=outside), rules=rules)
    assert result["is_error"] and "Not run" in result["content"]
    assert not (outside / "pwned").exists() and not (project / "victim").exists()
    assert (project / ".git" / "hooks" / "keep").exists() and not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / ".evo-agent" / "settings.json").read_text() == "{}"
    assert sorted(p.name for p in project.iterdir()) == before


def test_a_prefix_rule_still_covers_its_ordinary_use(project):
    from evo_agent.agent.permissions import Policy

    policy = Policy(project, "ask", parse_rules("Bash(find:*),Bash(git diff:*),Bash(npm test:*),Bash(rm:*)"))
    for command in ("find . -name '*.py' -print", "git diff --stat", "npm test -- --watch", "rm -rf build",
                    "rm .gitignore"):
        assert policy.check("bash", {"command": command}).action == "allow", command


# --------------------------------------------------------------------------- properties

SAFE_WORDS = ["README.md", "src", ".", "-n", "-l", "foo", "'a b'", "*.md", "-c", "--count", "-r"]


# Whole options of their own, which git matches exactly before any abbreviation (`--text` is not `--textconv`).
EXACT_OPTIONS = frozenset({"--text"})


def _spellings(*names: str) -> list[str]:
    """Every abbreviation GNU getopt or git could take for these long options, and the whole name with a value."""
    short = [f"--{name[:n]}" for name in names for n in range(2, len(name) + 1)]
    return [s for s in short if s not in EXACT_OPTIONS] + [f"--{n}=sh" for n in names]


# Anywhere, for every program: redirections, substitutions, sequences, pipes into programs with side effects.
UNIVERSAL_BAD = [">x", "2>x", ">>x", "<x", "$(id)", "`id`", "<(id)", ">(id)", "${x}", "$x", ";", "&", "| sh",
                 "| tee x", "&& rm x", "|| curl x", "\nrm x", "{a,b}", "\\-o", "~/.ssh", "'x'>y", "| xargs rm",
                 "| bash", "&& curl http://x", "| nc host 1", "; touch x", "& touch x", "|& sh", "(touch x)"]
# Per program: its options that write, execute, follow links out of the project or never end.
PROGRAM_BAD = {
    "sort": [*_spellings("output", "compress-program", "temporary-directory", "files0-from", "random-source"),
             "-o", "-ox", "-uo", "-T", "-Tx", "-ro"],
    "rg": [*_spellings("pre", "search-zip", "hostname-bin", "follow"), "-z", "-L", "-nL", "-zn"],
    "grep": [*_spellings("dereference-recursive"), "-R", "-rR", "-nR"],
    "find .": ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L",
               "-follow", "-files0-from"],
    "git log": [*_spellings("output", "ext-diff", "textconv", "show-signature"), "-O", "-Ox"],
    "git show": [*_spellings("output", "ext-diff", "textconv", "show-signature"), "-O", "-Ox"],
    "git diff": [*_spellings("output", "ext-diff", "textconv", "no-index"), "-O", "-Ox"],
    "tail": [*_spellings("follow", "retry", "pid"), "-f", "-F", "-qf"],
    "wc": _spellings("files0-from"),
    "ls": [*_spellings("dereference", "dereference-command-line"), "-L", "-lL"],
    "cat": ["-x", "--bogus", "--help"],
    "git status": ["--no-optional-locks", "-c", "--exec"],
}


@st.composite
def hostile_commands(draw) -> str:
    program = draw(st.sampled_from([*PROGRAMS, *PROGRAM_BAD]))
    bad = draw(st.sampled_from(UNIVERSAL_BAD + PROGRAM_BAD.get(program, [])))
    before = draw(st.lists(st.sampled_from(SAFE_WORDS), max_size=3))
    after = draw(st.lists(st.sampled_from(SAFE_WORDS), max_size=3))
    return " ".join([program, *before, bad, *after])


@settings(max_examples=500, deadline=None)
@given(command=hostile_commands())
def test_nothing_with_a_write_exec_or_network_option_redirection_or_substitution_runs_unasked(
        tmp_path_factory, command):
    project = tmp_path_factory.getbasetemp()
    plan = plan_read_only(command, project)
    assert isinstance(plan, str), f"{command!r} would run unasked as {plan}"


@settings(max_examples=300, deadline=None)
@given(program=st.sampled_from(["ls", "cat", "head", "wc", "grep -n x", "rg x", "sort", "git log", "git status"]),
       words=st.lists(st.sampled_from(SAFE_WORDS), max_size=4))
def test_what_runs_unasked_is_exactly_quoted_words(tmp_path_factory, program, words):
    """The plan passes bash only quoted words joined by the checked operators: nothing left to expand."""
    project = tmp_path_factory.getbasetemp()
    plan = plan_read_only(" ".join([program, *words]), project)
    if isinstance(plan, str):
        return
    for word in shlex.split(plan.command):
        assert shlex.quote(word) in plan.command
    assert not set("$`;<>&{}\\") & set(plan.command.replace("'", "").replace('"', ""))


@settings(max_examples=300, deadline=None)
@given(lead=st.sampled_from(["", "./", "sub/../", "./sub/../", "nowhere/../", "sub/./../"]),
       name=st.sampled_from([".git", ".g?t", ".gi*", ".[g]it", ".git/", ".evo-agent", ".evo-agen?", ".evo*", ".e*t",
                             ".[e]vo-agent", "gitlink", "gitlink/."]),
       tail=st.sampled_from(["", "/hooks", "/config", "/hooks/pre-commit", "/settings.json", "/../.git/x"]),
       shape=st.sampled_from(["rm -rf {}", "cp a {}", "sort --output={} x", "sort -o{} x", "tee {}", "mv x {}",
                              "chmod +x {}", "cd {} && rm x", "ln -s /tmp {}"]))
def test_the_protected_dirs_are_found_in_every_spelling(tmp_path_factory, lead, name, tail, shape):
    from evo_agent.tools.shell_words import protected_dir

    project = tmp_path_factory.mktemp("guard")
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".evo-agent").mkdir()
    (project / "sub").mkdir()
    (project / "gitlink").symlink_to(project / ".git")
    command = shape.format(f"{lead}{name}{tail}")
    assert protected_dir(command, project) is not None, command


@pytest.mark.parametrize("command", ["rm -rf build", "git add .gitignore", "cp a.git b", "touch .github/x",
                                     "git clone git@github.com:x/y.git", "rm -rf *", "ls .evo-agent-notes"])
def test_near_misses_are_not_protected(project, command):
    from evo_agent.tools.shell_words import protected_dir

    assert protected_dir(command, project) is None


# --------------------------------------------------------------------------- git without its code paths


def _run_plan(command: str, project: Path, **env: str) -> subprocess.CompletedProcess:
    """The plan for `command` run as the bash tool runs it, without the sandbox."""
    plan = plan_read_only(command, project)
    assert isinstance(plan, ReadOnlyPlan), plan
    return subprocess.run(["bash", "-c", plan.command], cwd=project, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env, "PATH": plan.path})


@pytest.mark.parametrize("spelling", LAZY_FETCH_SPELLINGS)
@pytest.mark.parametrize("command", ["git show HEAD", "git log -p", "git diff HEAD~1", "git log --stat",
                                     "git show --stat HEAD~1"])
def test_unasked_git_never_fetches_a_partial_clones_missing_objects(tmp_path, spelling, command):
    marker = tmp_path / "pwned"
    victim, helpers = partial_clone(tmp_path, marker, spelling)
    path = f"{helpers}:{os.environ['PATH']}"
    ran = _run_plan(command, victim, PATH=path)
    assert "PWNED" not in ran.stderr and not marker.exists()

    plain_bash(command, victim, PATH=path)  # the control: plain git fetches, and the payload runs
    assert marker.exists()


@pytest.mark.parametrize("command", ["git status", "git diff", "git status --porcelain", "git diff HEAD",
                                     "git status -s", "git diff --stat", "git log -p -1"])
def test_unasked_git_never_enters_a_submodule(tmp_path, command):
    marker = tmp_path / "pwned"
    sup = submodule_with_filter(tmp_path, marker)
    ran = _run_plan(command, sup)
    assert "PWNED" not in ran.stdout + ran.stderr and not marker.exists()

    plain_bash("git status", sup)  # the control: the submodule's own filter runs
    assert marker.exists()


@pytest.mark.parametrize("command", ["git status --ignore-submodules=none", "git status --ignore-submodules",
                                     "git diff --ignore-submodules=dirty", "git diff --submodule=diff"])
def test_asking_git_into_submodules_asks(project, command):
    assert read_only_reason(command, project) is not None


@pytest.mark.parametrize("name", ["x=y", "a.b=c", "=", "x=y=z"])
@pytest.mark.parametrize("command", ["git status", "git diff", "git status --porcelain"])
def test_a_filter_named_with_an_equals_sign_is_still_off(tmp_path, name, command):
    marker = tmp_path / "pwned"
    repo = filter_named(tmp_path, marker, name)
    ran = _run_plan(command, repo)
    assert "PWNED" not in ran.stdout + ran.stderr and not marker.exists()

    plain_bash(command, repo)  # the control
    assert marker.exists()


def test_unasked_git_status_never_rewrites_the_index(project):
    (project / "README.md").write_text("changed\n")
    subprocess.run(["git", "add", "README.md"], cwd=project, check=True)
    os.utime(project / "README.md", (1, 1))  # stat changed, content not: plain status refreshes the index
    index = project / ".git" / "index"
    before = index.read_bytes()
    for command in ("git status", "git status -s", "git status --porcelain", "git diff", "git diff --stat",
                    "git diff HEAD", "git diff -- README.md"):
        _run_plan(command, project)
    assert index.read_bytes() == before

    plain_bash("git status", project)  # the control
    assert index.read_bytes() != before


@pytest.mark.parametrize("command", [
    "git diff /dev/null {secret}", "git diff README.md {secret}", "git diff -- /dev/null {secret}",
    "git diff --stat /dev/null {secret}", "git diff {secret} /dev/null", "git diff /dev/null link-out",
    "git diff -- README.md link-out", "git diff ../outside/secret README.md", "git log -- {secret}",
    "git show HEAD -- {secret}", "git status {outside}", "git diff -p --no-color /dev/null {secret}",
    # options whose argument git takes only attached: the next word is an operand to git
    "git diff -U {secret} /dev/null", "git diff --unified {secret} /dev/null", "git diff --abbrev {secret} /dev/null",
    "git diff --word-diff {secret} /dev/null", "git diff --relative {secret} /dev/null",
])
def test_git_never_reads_outside_the_project_unasked(project, tmp_path, command):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret"
    secret.write_text("the-secret-text\n")
    (project / "link-out").symlink_to(secret)
    command = command.format(secret=secret, outside=outside)
    assert read_only_reason(command, project) is not None

    if command.startswith("git diff") and "link-out" not in command and "--stat" not in command:
        # the control: plain git diff falls into --no-index mode and prints the secret
        assert "the-secret-text" in plain_bash(command, project).stdout, command


@pytest.mark.parametrize("command", ["git diff HEAD -- README.md", "git log -- README.md", "git show HEAD:README.md",
                                     "git diff HEAD~0..HEAD", "git log --oneline HEAD", "git status -- README.md",
                                     "git diff /dev/null README.md", "git log -p -- .", "git show HEAD~0 --stat"])
def test_git_with_revisions_and_project_paths_still_runs_unasked(project, command):
    assert read_only_reason(command, project) is None
    assert _run_plan(command, project).returncode in (0, 1)
