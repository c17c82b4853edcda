"""A conservative test of whether a bash command only reads the project (issue #15).

`read_only_reason(command, project_dir)` returns None when the command may run unasked, else a
short reason. It errs on the side of asking: anything it does not fully understand asks.

The rules, in order:

1. Characters that bash gives meaning this parser does not model are refused outright:
   `$` (expansion, `$(…)`), backticks, `<`/`>` (redirection, process substitution), `{`/`}`
   (brace expansion), `\\` (escapes), newlines, `;` (sequencing).
2. The rest is tokenised with `shlex` (POSIX mode, no comments, `punctuation_chars`), so
   quoting is understood and operators become their own tokens. Only `|`, `&&` and `||`
   may join commands; any other operator (`&`, `(`, `|&`, …) asks.
3. Every command's first word must be a known read-only program, with none of its writing or
   executing options (`find -exec`, `rg --pre`, `sort -o`, `git diff --output`, …); `git` only
   as `git status|log|diff|show`.
4. Every other word that could name a file must resolve (globs expanded, symlinks followed)
   inside the project — `cat ~/.ssh/id_rsa` and `cat link-to-etc/passwd` ask. Options that
   carry a path (`--file=/x`, `-f/x`) ask.
"""

from __future__ import annotations

import glob
import os
import shlex
from pathlib import Path

from .confine import inside_project, real

FORBIDDEN_CHARS = {
    "$": "expansion or substitution",
    "`": "command substitution",
    ">": "redirection",
    "<": "redirection",
    "{": "brace expansion",
    "}": "brace expansion",
    "\\": "escapes",
    "\n": "several lines",
    "\r": "several lines",
    ";": "a command sequence",
}
JOINERS = frozenset({"|", "&&", "||"})
# Programs that only read, and whose arguments that are not options are (or may be) paths.
PATH_PROGRAMS = frozenset({
    "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "stat", "file",
    "du", "nl", "cut", "sort", "uniq", "diff", "tr", "git",
})
# Programs that only print their arguments: nothing to check but the characters above.
ECHO_PROGRAMS = frozenset({"echo", "printf", "pwd", "true", "false", "basename", "dirname", "whoami", "sleep"})
# Options that write, execute or leave the project, per program (prefix match on the option).
DENIED_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls", "-L", "-follow"),
    "grep": ("-R", "--dereference-recursive"),
    "egrep": ("-R", "--dereference-recursive"),
    "fgrep": ("-R", "--dereference-recursive"),
    "rg": ("--pre", "-L", "--follow", "-z", "--search-zip", "--hostname-bin"),
    "file": ("-C", "--compile"),
    "sort": ("-o", "--output", "--compress-program"),
    "git": ("--output", "--ext-diff", "--textconv", "--no-index"),
    "tail": ("-f", "-F", "--follow"),  # never ends: not dangerous, but it would hang the turn
}
GIT_READ_ONLY = frozenset({"status", "log", "diff", "show"})
# Programs whose last operand, past this many, is a file they write (`uniq IN OUT`).
MAX_OPERANDS = {"uniq": 1, "tr": 2}
HARMLESS_PATHS = frozenset({"-", "/dev/null"})


def read_only_reason(command: str, project_dir: Path | str) -> str | None:
    """None when `command` is read-only by the rules above; otherwise why it needs approval."""
    for char, what in FORBIDDEN_CHARS.items():
        if char in command:
            return f"uses {what} ({char!r})"
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.commenters = ""
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as exc:  # unbalanced quotes
        return f"cannot be parsed ({exc})"
    if not tokens:
        return "is empty"
    commands: list[list[str]] = [[]]
    for token in tokens:
        if token in JOINERS:
            commands.append([])
        elif token and all(c in "();<>|&" for c in token):
            return f"uses the shell operator {token!r}"
        else:
            commands[-1].append(token)
    for words in commands:
        reason = _command_reason(words, project_dir)
        if reason is not None:
            return reason
    return None


def _command_reason(words: list[str], project_dir: Path | str) -> str | None:
    if not words:
        return "has an empty command"
    program, args = words[0], words[1:]
    if program in ECHO_PROGRAMS:
        return None
    if program not in PATH_PROGRAMS:
        return f"runs {program!r}, which may have side effects"
    if program == "git":
        if not args or args[0] not in GIT_READ_ONLY:
            return "runs a git command other than status, log, diff or show"
        args = args[1:]
    denied = DENIED_OPTIONS.get(program, ())
    operands = [w for w in args if not w.startswith("-") or w == "-"]
    if program in MAX_OPERANDS and len(operands) > MAX_OPERANDS[program]:
        return f"gives {program} {len(operands)} operands (the last may be a file it writes)"
    for word in args:
        if word.startswith("-") and word != "-":
            if _denied(program, word, denied):
                return f"uses {program} {word.split('=')[0]}, which may write or execute"
            if "/" in word or "~" in word:
                return f"passes a path in the option {word.split('=')[0]!r}"
            continue
        if not _inside(word, project_dir):
            return f"reads {word!r}, outside the project"
    return None


def _denied(program: str, word: str, denied: tuple[str, ...]) -> bool:
    """Whether option `word` is one of `denied`; bundled short options (`-rR`) are looked into."""
    if any(word.startswith(d) for d in denied if len(d) > 2 or program == "find"):
        return True
    if program == "find" or word.startswith("--"):
        return False
    letters = word[1:]
    return any(d[1] in letters for d in denied if len(d) == 2)


def _inside(word: str, project_dir: Path | str) -> bool:
    """Whether every path `word` may expand to lies inside the project."""
    if word in HARMLESS_PATHS:
        return True
    if word.startswith("~"):
        return False
    root = str(project_dir)
    candidates = [word]
    if glob.has_magic(word):
        pattern = word if os.path.isabs(word) else os.path.join(root, word)
        candidates += glob.glob(pattern, include_hidden=True)
    for candidate in candidates:
        full = candidate if os.path.isabs(candidate) else os.path.join(root, candidate)
        if not inside_project(project_dir, real(full)):
            return False
    return True


__all__ = ["read_only_reason"]
