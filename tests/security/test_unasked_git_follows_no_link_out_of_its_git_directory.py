"""Unasked git reads nothing outside the project through the insides of the `.git` it was judged by.

The check looked at the entries at the top of a `.git/` (and of `objects/`) for links out, and at the first 64 KiB
of `objects/info/alternates` line by line. An unpacked archive went around it, and `git status`, `git log` or
`git show HEAD:deploy.env` run unasked read the victim's files into the session:

- a link one level deeper: `.git/info/grafts -> ~/.netrc` (git quotes every bad graft line, on every command),
  `.git/rebase-merge/git-rebase-todo` (`git status` prints the todo lines), `objects/pack/pack-X.pack` (the
  victim's packed history), `.git/refs/heads/main` (the victim's branch);
- an alternates line spelled as git reads it and the check did not: `"quoted"` (C-style), one after 64 KiB of
  comments, or one in an in-project alternate's own `info/alternates` (git follows them 5 deep);
- a `commondir` longer than the 4 KiB the check read (2,000 `./`, then `../../work/.git`), or one in the git
  directory a `.git` file or link names inside the project (only a `.git/` directory's was read).

Each now asks. The controls: plain git reads the secret in every one, and an ordinary clone, a `clone --shared` of
a repository inside the project, still run unasked.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.tools.shell_readonly import ReadOnlyPlan, plan_read_only
from tests.cli_runner import Cli
from tests.fake_model_server import text, tool_use

from .hostile import GIT, clone, env_without_bwrap, git, upstream

SECRET = "wJalrXUtnFEMI-the-victims-own"
NETRC = f"machine github.com login mallory password p@{SECRET}\n"  # (`@`: no valid attribute name)
COMMANDS = ["git status", "git log --oneline", "git log -p", "git show HEAD:deploy.env", "git diff HEAD"]


def _env(tmp_path, model_server):
    return env_without_bwrap(tmp_path, model_server)


def _victim(src):
    """The victim's repository next door (`~/src/work`), packed, and the victim's `~/.netrc` above it."""
    work = src / "work"
    subprocess.run([*GIT, "init", "-q", str(work)], check=True)
    (work / "deploy.env").write_text(f"AWS_SECRET_ACCESS_KEY={SECRET}\n")
    assert git(work, "add", "-A").returncode == 0
    assert git(work, "commit", "-q", "-m", "deploy settings").returncode == 0
    assert git(work, "gc", "-q").returncode == 0
    (src / ".netrc").write_text(NETRC)
    return work


def _tool(src):
    """The archive, unpacked next door: a repository of its own, its `.git/` shipped as the attacker made it."""
    tool = src / "tool"
    subprocess.run([*GIT, "init", "-q", str(tool)], check=True)
    (tool / "README.md").write_text("# tool\n")
    assert git(tool, "add", "-A").returncode == 0
    assert git(tool, "commit", "-q", "-m", "tool").returncode == 0
    return tool


def _victims_head(work) -> str:
    return git(work, "rev-parse", "HEAD").stdout.strip()


def _alternates(tool, line: str, work) -> None:
    """`line` in the tool's alternates, and its branch at the victim's commit (as a link to the victim's ref would
    have it: written plainly here, so that only the alternates line is the trick)."""
    (tool / ".git" / "objects" / "info" / "alternates").write_text(line)
    (tool / ".git" / "refs" / "heads" / "main").write_text(_victims_head(work) + "\n")


def _arm(src, how: str):
    work = _victim(src)
    tool = _tool(src)
    inner = tool / ".git"
    victim_objects = work / ".git" / "objects"
    if how in ("grafts", "attributes"):
        os.symlink("../../../.netrc", inner / "info" / how)
    elif how == "rebase-todo":
        (inner / "rebase-merge").mkdir()
        for name in ("git-rebase-todo", "done"):
            os.symlink("../../../.netrc", inner / "rebase-merge" / name)
        (inner / "rebase-merge" / "onto").write_text(git(tool, "rev-parse", "HEAD").stdout)
        (inner / "rebase-merge" / "head-name").write_text("refs/heads/main\n")
        (inner / "rebase-merge" / "interactive").write_text("")
    elif how == "pack-links":
        (pack,) = (victim_objects / "pack").glob("*.pack")
        for suffix in (".pack", ".idx"):
            os.symlink(pack.with_suffix(suffix), inner / "objects" / "pack" / pack.with_suffix(suffix).name)
        (inner / "refs" / "heads" / "main").write_text(_victims_head(work) + "\n")
    elif how == "ref-link":  # the victim's branch and, through a quoted line, its objects: nothing to guess
        (inner / "refs" / "heads" / "main").unlink()
        os.symlink("../../../../work/.git/refs/heads/main", inner / "refs" / "heads" / "main")
        assert git(work, "commit", "-q", "--allow-empty", "-m", "later").returncode == 0  # a loose ref again
        (inner / "objects" / "info" / "alternates").write_text(f'"{victim_objects}"\n')
    elif how == "quoted":
        _alternates(tool, f'"{victim_objects}"\n', work)
    elif how == "after-64k":
        _alternates(tool, "#" * 70_000 + f"\n{victim_objects}\n", work)
    elif how == "nested":
        (tool / "vendor" / "objects" / "info").mkdir(parents=True)
        (tool / "vendor" / "objects" / "info" / "alternates").write_text(f"{victim_objects}\n")
        _alternates(tool, "../../vendor/objects\n", work)
    elif how == "nested-link":  # an in-project alternate whose `pack` is the victim's
        (tool / "vendor" / "objects").mkdir(parents=True)
        os.symlink(victim_objects / "pack", tool / "vendor" / "objects" / "pack")
        _alternates(tool, "../../vendor/objects\n", work)
    elif how == "long-commondir":
        shutil.rmtree(inner)
        inner.mkdir()
        (inner / "HEAD").write_text("ref: refs/heads/main\n")
        (inner / "commondir").write_text("./" * 2100 + "../../work/.git\n")
    elif how in ("gitdir-file-commondir", "dot-git-link-commondir"):  # a `.git` into the project, and out from there
        shutil.rmtree(inner)
        hidden = tool / ".hidden" / "gd"
        hidden.mkdir(parents=True)
        (hidden / "HEAD").write_text("ref: refs/heads/main\n")
        (hidden / "commondir").write_text("../../../work/.git\n")
        if how == "gitdir-file-commondir":
            inner.write_text("gitdir: .hidden/gd\n")
        else:
            os.symlink(".hidden/gd", inner)
    else:
        raise AssertionError(how)
    return tool


SPELLINGS = ["grafts", "attributes", "rebase-todo", "pack-links", "ref-link", "quoted", "after-64k", "nested",
             "nested-link", "long-commondir", "gitdir-file-commondir", "dot-git-link-commondir"]


def _plain(tool, command: str) -> str:
    ran = subprocess.run(["bash", "-c", command], cwd=tool, capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
    return ran.stdout + ran.stderr


@pytest.mark.parametrize("how", SPELLINGS)
def test_no_link_or_alternates_spelling_lets_unasked_git_read_outside(tmp_path, how):
    src = tmp_path / "src"
    src.mkdir()
    tool = _arm(src, how)
    # The control: plain git reads the victim's file (quoted in an error, or its history) with one of them.
    assert any(SECRET in _plain(tool, command) for command in COMMANDS), how
    for command in COMMANDS:
        plan = plan_read_only(command, tool)
        assert isinstance(plan, str), (how, command)  # it asks
        assert "outside the project" in plan or "too long" in plan, plan


@pytest.mark.parametrize("how", ["grafts", "rebase-todo", "quoted", "long-commondir"])
def test_through_the_agent_the_victims_files_never_reach_the_model(tmp_path, model_server, how):
    src = tmp_path / "src"
    src.mkdir()
    tool = _arm(src, how)
    command = "git status" if how == "rebase-todo" else "git log -p"
    assert SECRET in _plain(tool, command)
    model_server.script(tool_use("bash", {"command": command}, id="t1"), text("done"))
    result = Cli(tool, _env(tmp_path, model_server)).run("-p", "what is this?")
    assert SECRET not in repr(model_server.requests)
    assert "needs approval" in result.err


def test_the_control_an_ordinary_clone_and_a_shared_clone_inside_still_run_unasked(tmp_path, model_server):
    """`git clone --shared` of a repository inside the project writes an in-project alternates line (and the
    repository it names has no alternates of its own): nothing leads out, so git still runs unasked."""
    project = tmp_path / "project"
    project.mkdir()
    origin = upstream(project, {"notes.txt": "hello from upstream\n"}, name="upstream")
    ordinary = clone(origin, project / "ordinary")
    shared = project / "shared"
    subprocess.run(["git", "clone", "-q", "--shared", str(origin), str(shared)], check=True, timeout=60)
    assert (shared / ".git" / "objects" / "info" / "alternates").read_text().strip() == str(origin / ".git" / "objects")
    for checkout in (ordinary, shared):
        for command in COMMANDS[:4]:
            plan = plan_read_only(command.replace("deploy.env", "notes.txt"), project, cwd=checkout)
            assert isinstance(plan, ReadOnlyPlan), (checkout.name, command, plan)
    model_server.script(tool_use("bash", {"command": "git show HEAD:notes.txt"}, id="t1"), text("done"))
    result = Cli(ordinary, _env(tmp_path, model_server)).run("-p", "what is it?")
    assert "needs approval" not in result.err, result.err
    assert "hello from upstream" in repr(model_server.requests[-1]["messages"][-1])


@pytest.fixture(scope="module")
def next_door(tmp_path_factory):
    """The victim's repository and the archive next door, built once: each example rewrites only the alternates."""
    src = tmp_path_factory.mktemp("alternates") / "src"
    src.mkdir()
    work = _victim(src)
    tool = _tool(src)
    (tool / ".git" / "refs" / "heads" / "main").write_text(_victims_head(work) + "\n")
    vendor = tool / "vendor" / "objects" / "info"
    vendor.mkdir(parents=True)
    (vendor / "alternates").write_text(f"{work / '.git' / 'objects'}\n")  # an in-project alternate's own, leading out
    return tool, str(work / ".git" / "objects")


def _octal(text: str, draw_bits: list[bool]) -> str:
    """`text` with some of its `/` written as C octal escapes (what a quoted line may hold)."""
    out, bits = [], iter(draw_bits)
    for char in text:
        out.append("\\057" if char == "/" and next(bits, False) else char)
    return "".join(out)


@st.composite
def _alternates_line(draw, victim: str) -> str:
    kind = draw(st.sampled_from(["absolute", "quoted", "relative", "nested", "comment", "padding", "empty"]))
    path = {"absolute": victim, "relative": "../../../work/.git/objects", "nested": "../../vendor/objects"}.get(
        kind, victim)
    if kind == "quoted":
        body = _octal(victim, draw(st.lists(st.booleans(), max_size=8)))
        line = f'"{body}"' + draw(st.sampled_from(["", "x", "x/../..", " "]))
    elif kind == "comment":
        line = "#" + draw(st.sampled_from([victim, "", " note"]))
    elif kind == "padding":
        line = "#" * 70_000
    elif kind == "empty":
        line = ""
    else:
        line = path
    return draw(st.sampled_from(["", " ", "  "])) + line + draw(st.sampled_from(["", " ", "\r"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_whenever_plain_git_reads_next_door_through_alternates_unasked_git_asks(next_door, data):
    """The invariant, over alternates files built from the spellings git reads: if plain git shows the victim's file,
    the check asks."""
    tool, victim = next_door
    lines = data.draw(st.lists(_alternates_line(victim), min_size=1, max_size=4))
    (tool / ".git" / "objects" / "info" / "alternates").write_text("\n".join(lines) + "\n")
    leaked = SECRET in _plain(tool, "git show HEAD:deploy.env")
    plan = plan_read_only("git show HEAD:deploy.env", tool)
    if leaked:
        assert isinstance(plan, str), lines


@pytest.mark.parametrize("wrapper", ["wrap:x", "a:b/wrap"])
def test_a_colon_above_the_repository_cannot_send_git_past_its_empty_git(tmp_path, model_server, wrapper):
    """GIT_CEILING_DIRECTORIES (the judged repository's parent) is a `:`-separated list. An archive unpacked as
    `wrap:x/` holding its own repository (alternates next door) and `tool/` with an empty `.git/`: split at the `:`,
    the ceiling named no ancestor, git climbed from `tool` to `wrap:x/.git`, and `git show` printed the victim's
    file, the check having judged only `tool/.git`."""
    src = tmp_path / "src"
    src.mkdir()
    work = _victim(src)
    outer = src / wrapper
    outer.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GIT, "init", "-q", str(outer)], check=True)
    depth = wrapper.count("/") + 1
    (outer / ".git" / "objects" / "info" / "alternates").write_text("../../" + "../" * depth + "work/.git/objects\n")
    (outer / ".git" / "refs" / "heads" / "main").write_text(_victims_head(work) + "\n")
    tool = outer / "tool"
    (tool / ".git").mkdir(parents=True)
    (tool / "README.md").write_text("# tool\n")
    assert SECRET in _plain(tool, "git show HEAD:deploy.env")  # the control: plain git climbs to the wrapper
    for command in COMMANDS:
        plan = plan_read_only(command, tool)
        assert isinstance(plan, str) and "':'" in plan, (command, plan)
    model_server.script(tool_use("bash", {"command": "git show HEAD:deploy.env"}, id="t1"), text("done"))
    result = Cli(tool, _env(tmp_path, model_server)).run("-p", "what is this?")
    assert SECRET not in repr(model_server.requests)
    assert "needs approval" in result.err
