"""An ignore file a repository commits as a symlink to a device never makes a search read forever (SPEC §9).

A clone can commit `.ignore`, `.rgignore` or `.gitignore` as a symlink to `/dev/zero`, `/dev/urandom` or a
`/proc/self/root/dev/...` path. ripgrep reads every ignore file it meets while it walks: an unasked `rg needle`
read the device until it ran out of memory (or the tool's timeout), inside the read-only sandbox too, whose
`/dev` and `/proc` were real ones. The grep and glob tools read `.gitignore` files the same way (ignore.py), and
an unpacked archive can make one a FIFO, which blocks the open forever. Now the read-only sandbox's `/dev` holds
`/dev/null` only and its `/proc` is empty, and ignore.py reads an ignore file without following a symlink
(as git >= 2.32 does), without blocking and at most 1 MiB of it.

Every run is bounded twice: the bash tool's own `timeout`, and a cap on the address space of the whole
`evo-agent` process tree (so a regression is a failed test, never a machine out of memory).
"""

from __future__ import annotations

import os
import resource
import subprocess

import pytest

from evo_agent.tools.sandbox import SandboxError, check_sandbox
from tests.cli_runner import COMMAND, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, unpack_archive_of, upstream

MEMORY_CAP = 2 << 30  # bytes of address space for evo-agent and everything it starts

LINKS = [(".ignore", "/dev/zero"), (".rgignore", "/dev/urandom"), (".gitignore", "/proc/self/root/dev/zero"),
         ("src/.ignore", "/dev/zero"), ("src/.rgignore", "/proc/self/root/dev/urandom"),
         (".ignore", "/proc/1/root/dev/zero")]


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_capped(project, env, *args: str) -> subprocess.CompletedProcess:
    """`evo-agent args` in `project`, its memory capped, killed after 120 s (a hang fails the test)."""
    return subprocess.run([*COMMAND, *args], cwd=project, env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=_cap_memory)


def _hostile_clone(tmp_path, links: dict[str, str]):
    files = {"src/app.txt": "the needle is here\n", "notes.txt": "another needle\n"}
    return clone(upstream(tmp_path, files, links), tmp_path / "clone")


def _results(model_server) -> list[dict]:
    return model_server.requests[-1]["messages"][-1]["content"]


@pytest.mark.parametrize("command", ["rg -n needle", "rg -n needle src", "rg -l needle ."])
@pytest.mark.parametrize(("name", "target"), LINKS)
def test_an_unasked_rg_never_reads_a_device_an_ignore_file_links_to(tmp_path, model_server, name, target, command):
    project = _hostile_clone(tmp_path, {name: target})
    try:
        check_sandbox(project, writable=False)
    except SandboxError as exc:
        pytest.skip(f"no read-only sandbox here: {exc}")
    model_server.script(tool_use("bash", {"command": command, "timeout": 20}, id="t1"), text("done"))
    result = run_capped(project, model_server.env(clean_env(tmp_path / "home")), "-p", "find the needle")
    assert result.returncode == 0, result.stderr
    assert "needs approval" not in result.stderr  # it ran unasked, as a read-only search does
    content = _results(model_server)[0]["content"]
    assert "src/app.txt" in content and "[exit code 0]" in content, content


@pytest.mark.parametrize(("name", "target"), [(n, t) for n, t in LINKS if n.endswith(".gitignore")]
                         + [(".gitignore", "/dev/zero"), ("src/.gitignore", "/dev/urandom")])
@pytest.mark.parametrize("tool", ["grep", "glob"])
def test_the_search_tools_never_read_a_device_a_gitignore_links_to(tmp_path, model_server, name, target, tool):
    project = _hostile_clone(tmp_path, {name: target})
    _search_finds_both_needles(project, model_server, tool, tmp_path)


@pytest.mark.parametrize("where", [".gitignore", "src/.gitignore", ".git/info/exclude"])
@pytest.mark.parametrize("tool", ["grep", "glob"])
def test_a_fifo_for_an_ignore_file_never_hangs_the_search_tools(tmp_path, model_server, where, tool):
    """tar keeps FIFOs: an unpacked archive's `.gitignore` can be one, and an open of it waits for a writer."""
    origin = upstream(tmp_path, {"src/app.txt": "the needle is here\n", "notes.txt": "another needle\n"})
    (origin / where).parent.mkdir(parents=True, exist_ok=True)
    (origin / where).unlink(missing_ok=True)
    os.mkfifo(origin / where)
    project = unpack_archive_of(origin, tmp_path / "unpacked")
    _search_finds_both_needles(project, model_server, tool, tmp_path)


@pytest.mark.parametrize("tool", ["grep", "glob"])
def test_a_gitignore_that_is_a_symlink_is_not_obeyed_as_git_does_not(tmp_path, model_server, tool):
    """git (>= 2.32) does not follow an in-tree `.gitignore` symlink; the search tools now agree with it."""
    project = _hostile_clone(tmp_path, {".gitignore": "rules.txt"})
    (project / "rules.txt").write_text("notes.txt\n")  # what the link would make the tools skip
    listed = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=project, capture_output=True,
                            text=True, timeout=60).stdout
    assert "!! notes.txt" not in listed  # the control: git does not obey it
    call = {"pattern": "needle"} if tool == "grep" else {"pattern": "**/*.txt"}
    model_server.script(tool_use(tool, call, id="t1"), text("done"))
    result = run_capped(project, model_server.env(clean_env(tmp_path / "home")), "-p", "find the needle")
    assert result.returncode == 0, result.stderr
    assert "notes.txt" in _results(model_server)[0]["content"]


def _search_finds_both_needles(project, model_server, tool: str, tmp_path) -> None:
    """The grep or glob tool, called by the model in `project`, answers with both planted files."""
    call = {"pattern": "needle"} if tool == "grep" else {"pattern": "**/*.txt"}
    model_server.script(tool_use(tool, call, id="t1"), text("done"))
    result = run_capped(project, model_server.env(clean_env(tmp_path / "home")), "-p", "find the needle")
    assert result.returncode == 0, result.stderr
    content = _results(model_server)[0]["content"]
    assert "src/app.txt" in content and "notes.txt" in content, content
