"""The grep tool's patterns run on RE2, linear in the text as ripgrep's engine (Claude Code's Grep) is.

A pattern the model writes after a prompt injection (`(a+)+$`) backtracked for ever in Python `re`, in a C loop
that Ctrl+C cannot interrupt: the agent froze. RE2 refuses what needs backtracking (lookaround, backreferences):
that is one `is_error` line saying what to use instead. Ordinary searches find what they found before.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool

_CATASTROPHIC = r"""
import sys
from pathlib import Path
from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool

root = Path(sys.argv[1])
(root / "input.txt").write_text("a" * 5000 + "b\n" + "a" * 20 + "\n")
result = run_tool(BASIC_TOOLS, "grep", {"pattern": "(a+)+$"}, ToolContext(project_dir=root))
print(result.is_error, result.content)
"""


def call(root: Path, **tool_input):
    return run_tool(BASIC_TOOLS, "grep", tool_input, ToolContext(project_dir=root))


def test_a_catastrophic_pattern_finishes(tmp_path):
    # In a child with a generous bound: on a backtracking engine this never ends, and must fail, not hang the suite.
    done = subprocess.run([sys.executable, "-c", _CATASTROPHIC, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "False input.txt:2:" + "a" * 20 + "\n"


def test_lookaround_and_backreferences_are_one_clear_line(tmp_path):
    (tmp_path / "a.txt").write_text("foobar\n")
    for pattern in ("foo(?=bar)", "(?<!x)foo", r"(o)\1", "(?P<o>o)(?P=o)", r"(?P<o>o)\k<o>"):
        result = call(tmp_path, pattern=pattern)
        assert result.is_error
        assert len(result.content.splitlines()) == 1, result.content
        assert "lookaround" in result.content and "backreference" in result.content, result.content
        assert "Traceback" not in result.content


def test_an_invalid_pattern_is_one_line(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    result = call(tmp_path, pattern="(unclosed")
    assert result.is_error and len(result.content.splitlines()) == 1, result.content
    assert result.content.startswith("invalid regex")
    assert "$ is the end of the line" in call(tmp_path, pattern=r"x\Z").content


def test_inline_flags_still_work(tmp_path):
    (tmp_path / "a.txt").write_text("Hello World\nhello\nÉTÉ été\n")
    assert call(tmp_path, pattern="(?i)^hello").content == "a.txt:1:Hello World\na.txt:2:hello"
    assert call(tmp_path, pattern="(?i)été").content == "a.txt:3:ÉTÉ été"
    assert call(tmp_path, pattern=r"d$").content == "a.txt:1:Hello World"
    assert call(tmp_path, pattern=r"(?s)W.rld").content == "a.txt:1:Hello World"


_ALPHABET = "ab.\nxé"
_ATOMS = st.sampled_from(["a", "b", "x", "é", ".", "[ab]", "[^a]", r"\.", "(a|b)", "(?:ab)", "^", "$", " ", r"\b",
                          r"\s", r"\A", r"\S"])
_ANCHORS = ("^", "$", r"\b", r"\A")


@st.composite
def _patterns(draw) -> str:
    parts = []
    for atom in draw(st.lists(_ATOMS, min_size=1, max_size=6)):
        quantifier = draw(st.sampled_from(["", "", "*", "+", "?", "{1,2}"]))
        parts.append(atom + (quantifier if atom not in _ANCHORS else ""))
    pattern = "".join(parts)
    return draw(st.sampled_from([pattern, f"(?i){pattern}", f"{pattern}|b"]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=_patterns(), text=st.text(alphabet=_ALPHABET + "AB", max_size=40))
def test_ordinary_searches_find_what_python_re_finds(tmp_path, pattern, text):
    """Also over several lines, where each file is first searched whole: `^`, `$`, `\\b` at a line's ends."""
    assume(not (r"\b" in pattern and "é" in text))  # RE2's \b knows ASCII letters only, as its \w
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    lines = text.split("\n") if text else []
    if lines and lines[-1] == "":
        lines.pop()
    expected = [f"t.txt:{n}:{line}" for n, line in enumerate(lines, start=1) if re.search(pattern, line)]
    result = call(tmp_path, pattern=pattern)
    assert not result.is_error, result.content
    got = [] if result.content.startswith("No matches") else result.content.split("\n")
    assert got == expected
