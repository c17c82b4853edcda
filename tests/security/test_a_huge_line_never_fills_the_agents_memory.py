"""A file of one huge line never fills evo-agent's own memory (SPEC §9).

The grep and read_file tools run inside evo-agent, unasked (they only read). Both read a file line by line, and a
line was held whole: a clone can commit a file that is one line of gigabytes (git compresses a run of one letter
to a few megabytes; the checkout writes it out whole), and an unasked search took three times its size in the
agent's own memory, until the kernel killed the agent. Now a line is held up to 1 Mi characters and the rest
counted: the memory stays flat whatever the file.

Measured as the user's machine feels it: the peak resident memory of the evo-agent process tree, read by a small
parent that only starts it and waits (so no other test's children count).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.cli_runner import COMMAND, clean_env
from tests.fake_model_server import text, tool_use

from .hostile import clone, upstream

LINE_BYTES = 200 << 20  # one line of 200 MiB: held whole it took ~650 MB
PEAK_LIMIT_KB = 180 << 10  # the agent's own footprint is well below this; the line held whole is far above


def _peak_kb(project, env, *args: str) -> tuple[int, subprocess.CompletedProcess]:
    """Run `evo-agent args`; (the peak resident set of it and its children in KiB, the result)."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)\n"
             "sys.stderr.write(r.stderr)\n"
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    result = subprocess.run([sys.executable, "-c", probe, *COMMAND, *args], cwd=project, env=env,
                            capture_output=True, text=True, timeout=360)
    return int(result.stdout.split()[-1]), result


@pytest.fixture
def one_line_clone(tmp_path):
    origin = upstream(tmp_path, {"src/app.txt": "the needle is here\n"})
    with open(origin / "data.txt", "w") as f:
        chunk = "a" * (1 << 20)
        for _ in range(LINE_BYTES >> 20):
            f.write(chunk)
        f.write(" needle at the end\n")
    subprocess.run(["git", "add", "data.txt"], cwd=origin, check=True)
    subprocess.run(["git", "-c", "user.name=m", "-c", "user.email=m@example.invalid", "commit", "-q", "-m", "data"],
                   cwd=origin, check=True)
    return clone(origin, tmp_path / "clone")


@pytest.mark.parametrize(("tool", "call"), [("grep", {"pattern": "needle"}),
                                            ("read_file", {"path": "data.txt"})])
def test_an_unasked_read_of_a_huge_line_keeps_the_memory_flat(one_line_clone, tmp_path, model_server, tool, call):
    model_server.script(tool_use(tool, call, id="t1"), text("done"))
    peak, result = _peak_kb(one_line_clone, model_server.env(clean_env(tmp_path / "home")), "-p", "look")
    assert result.returncode == 0, result.stderr
    content = model_server.requests[-1]["messages"][-1]["content"][0]["content"]
    assert peak < PEAK_LIMIT_KB, f"{peak} KiB at peak"
    if tool == "grep":
        assert "src/app.txt:1:the needle is here" in content  # the search went on past the huge line
    else:
        assert f"line truncated, {LINE_BYTES + len(' needle at the end')} characters in all" in content
