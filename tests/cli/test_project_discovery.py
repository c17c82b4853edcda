"""The project is found like git finds its repository (SPEC §1), and the exit hint works where it was printed."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from tests.cli_runner import COMMAND, HINT_RE, Result
from tests.fake_model_server import text
from tests.prompt_cache import plain


def run_in(cwd: Path, env: dict, *args: str, input: str = "") -> Result:
    proc = subprocess.run([*COMMAND, *args], cwd=cwd, env=env, input=input, capture_output=True, text=True,
                          timeout=60)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


def test_continue_from_a_subdirectory_finds_the_projects_sessions(cli, model_server, project):
    deep = project / "src" / "deep"
    deep.mkdir(parents=True)
    model_server.script(text("first answer"), text("second answer"))
    first = run_in(deep, cli.env, "-p", "hello from deep")  # no .evo-agent yet: the git root is the project
    assert first.rc == 0, first.err
    assert HINT_RE.match(first.err_lines[-1]), first.err  # found from here: no --project-dir needed
    assert (project / ".evo-agent" / "sessions").is_dir()
    assert not (deep / ".evo-agent").exists() and not (project / "src" / ".evo-agent").exists()

    again = run_in(deep, cli.env, "-c", "-p", "and again")
    assert again.rc == 0 and again.out == "second answer\n", again.err
    assert plain(model_server.requests[-1]["messages"][0]) == plain({"role": "user", "content": "hello from deep"})
    listed = run_in(project / "src", cli.env, "sessions", "list", "--json")
    assert [row["first_prompt"] for row in json.loads(listed.out)] == ["hello from deep"] * 2  # the resume inherits it


def test_the_nearest_evo_agent_directory_wins_and_the_search_stops_at_the_git_root(cli, model_server, project, tmp_path):
    inner = project / "packages" / "app"
    (inner / ".evo-agent").mkdir(parents=True)  # a project of its own inside the repository
    model_server.script(text("ok"))
    done = run_in(inner / ".." / "app", cli.env, "-p", "hi")
    assert done.rc == 0, done.err
    assert len(list((inner / ".evo-agent" / "sessions").iterdir())) == 2  # .gitignore + the session
    assert not (project / ".evo-agent").exists()

    # Outside any repository: the nearest .evo-agent above, however far.
    outer = tmp_path / "outer"
    (outer / ".evo-agent").mkdir(parents=True)
    (outer / "a" / "b").mkdir(parents=True)
    listed = run_in(outer / "a" / "b", cli.env, "sessions", "list")
    assert listed.out == f"No sessions in {outer / '.evo-agent' / 'sessions'}\n"


def test_an_exit_hint_printed_with_project_dir_works_when_pasted_in_the_same_shell(cli, model_server, project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model_server.script(text("answer one"), text("answer two"))
    first = run_in(elsewhere, cli.env, "--project-dir", "../project", "-p", "remember 42")
    assert first.rc == 0, first.err
    hint = first.err_lines[-1]
    assert hint.startswith("Resume this session with: evo-agent --resume ")
    command = shlex.split(hint.split(": ", 1)[1])
    assert command[-2:] == ["--project-dir", str(project)]
    pasted = run_in(elsewhere, cli.env, *command[1:], "-p", "what was it?")
    assert pasted.rc == 0 and pasted.out == "answer two\n", pasted.err
    assert plain(model_server.requests[-1]["messages"][0]) == plain({"role": "user", "content": "remember 42"})


def test_sessions_list_worktrees_lists_the_other_worktrees_sessions(cli, model_server, project, tmp_path):
    other = tmp_path / "other-tree"
    git(project, "worktree", "add", "-q", "-b", "feature", str(other))
    model_server.script(text("main answer"), text("feature answer"))
    assert run_in(project, cli.env, "-p", "on main").rc == 0
    on_feature = run_in(other, cli.env, "-p", "on feature")
    assert on_feature.rc == 0, on_feature.err
    records = [json.loads(line) for line in next((other / ".evo-agent" / "sessions").glob("*/messages.jsonl"))
               .read_text().splitlines()]
    assert records[0]["git_branch"] == "feature"  # the worktree's own HEAD (its .git is a file)

    plain = run_in(project, cli.env, "sessions", "list")
    assert "on main" in plain.out and "on feature" not in plain.out
    both = run_in(project, cli.env, "sessions", "list", "--worktrees")
    assert both.rc == 0 and "on main" in both.out and "on feature" in both.out
    assert f"Worktree {other} (feature)" in both.out and f"--project-dir {other}" in both.out
    rows = json.loads(run_in(project, cli.env, "sessions", "list", "--worktrees", "--json").out)
    assert [(r["first_prompt"], r.get("worktree")) for r in rows] == [("on main", None), ("on feature", str(other))]
    from_other = json.loads(run_in(other, cli.env, "sessions", "list", "--worktrees", "--json").out)
    assert [(r["first_prompt"], r.get("worktree")) for r in from_other] == [
        ("on feature", None), ("on main", str(project))]
