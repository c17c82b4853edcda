"""shell_words expands a glob as bash does: the same names, for every pattern (property test against real bash).

The permission checks decide on the expansion, and a rule then lets bash run the pattern itself: any pattern
the two read differently (`.[[:alpha:]]it` was nothing to Python's glob, `.git` to bash) is a command that
runs unchecked (tests/security/test_rules_read_globs_as_bash_does.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evo_agent.tools.shell_words import Word, expand, split_words

NAMES = [".git", ".evo-agent", "-fprintf", "-delete", "git", "a.py", "B.txt", "x]y", "x[y", "a-b", "_u", "9z",
         ".hidden", "é", "sp ace"]
SUB = ["hooks", "config", ".inner"]

MEMBERS = st.sampled_from(["a", "g", "i", "t", "-", ".", "_", "z", "9", "B", "]", "[:alpha:]", "[:lower:]",
                           "[:upper:]", "[:punct:]", "[:digit:]", "[:alnum:]", "[:space:]", "[=g=]", "[.-.]",
                           "a-h", "0-9", "'x'", "']'", '"."'])


@st.composite
def brackets(draw) -> str:
    negate = draw(st.sampled_from(["", "!", "^"]))
    return "[" + negate + "".join(draw(st.lists(MEMBERS, min_size=1, max_size=3))) + "]"


PIECES = st.one_of(st.sampled_from([".", "g", "i", "t", "e", "v", "o", "-", "a", "*", "?", "f", "p", "'.g'", '"*"',
                                    "[", "]"]), brackets())
SEGMENT = st.lists(PIECES, min_size=1, max_size=5).map("".join)
PATTERN = st.lists(SEGMENT, min_size=1, max_size=2).map("/".join)


def _tree(root: Path) -> None:
    for name in NAMES:
        (root / name).mkdir(exist_ok=True)
        for sub in SUB:
            (root / name / sub).touch()


def _bash(pattern: str, root: Path) -> list[str]:
    script = f'for f in {pattern}; do printf "%s\\0" "$f"; done'
    out = subprocess.run(["bash", "-c", script], cwd=root, capture_output=True, timeout=30,
                         env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert out.returncode == 0, out.stderr
    return sorted(p for p in out.stdout.decode().split("\0") if p)


def _ours(pattern: str, root: Path) -> list[str]:
    words = split_words(pattern)
    assert len(words) == 1 and isinstance(words[0], Word), words
    return sorted(expand(words[0], root)[0])


@settings(max_examples=150, deadline=None)
@given(PATTERN)
def test_a_glob_expands_to_what_bash_expands_it_to(tmp_path_factory, pattern):
    root = tmp_path_factory.getbasetemp() / "globs"
    if not root.exists():
        root.mkdir()
        _tree(root)
    word = split_words(pattern)[0]
    assume(isinstance(word, Word) and word.is_pattern)  # a word without a glob is passed as it is
    ours, theirs = _ours(pattern, root), _bash(pattern, root)
    if theirs != [word.text]:  # never fewer: a name bash reaches is always judged
        assert set(theirs) <= set(ours), pattern
    assert ours == theirs, pattern


def test_the_bracket_spellings_of_git_and_of_options_are_found(tmp_path):
    _tree(tmp_path)
    for pattern in (".[[:alpha:]]it", ".[^x]it", ".[[=g=]]it", ".[[.g.]]it", '.[g"x"]it', ".evo[[:punct:]]agent",
                    "-[[:lower:]]printf", "-[!x]elete", ".[!a-[.-.]]it"):  # a range ending in a collating symbol
        assert _ours(pattern, tmp_path) == _bash(pattern, tmp_path) != [pattern.replace('"', "")], pattern
