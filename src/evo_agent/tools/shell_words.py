"""Bash words as bash sees them, for the permission checks (issue #26).

`split_words(command)` cuts a command line into `Word`s and operators the way bash's tokenizer
does for the subset the checks accept: single and double quotes (inside which nothing expands,
since `$`, backticks and `\\` are refused before), blanks, and the operator characters
`| & ; ( ) < >`. A `Word` remembers which of its parts were quoted, so a glob character counts
only where bash would expand it (`'*.py'` is a literal, `*.py` a pattern).

`expand(word, root)` is the word after bash's pathname expansion, done here instead of by bash:
matches sorted, dot files only for a pattern that starts with a dot (bash's default), the
pattern itself when nothing matches (bash without nullglob). The checks then run the expansion,
never the pattern, so what was checked is what runs. Patterns are matched as bash 5 matches them,
not as Python's `glob` does: `[^x]` negates, `[[:alpha:]]`, `[[=g=]]` and `[[.g.]]` are classes,
a quoted character inside brackets is a member (`.[g"x"]it`); each names `.git` for bash and
nothing for Python, so a check reading them as Python does let `Bash(cp:*)` copy into `.git/`.
A class this module does not know is taken to match any character (the checks then ask more,
never less).

`protected_dir(command, root)` names `.git`, `.evo-agent` or the user's evo-agent config directory
(`~/.config/evo-agent`: MCP servers, "always" rules and trust answers for every project) when some
word of some command (an option's value included) may be a path inside one of them: resolved (`..`, symlinks) from
the project, and each path segment compared as bash would match it (`.evo-agen?` is `.evo-agent`).
Every `.git` counts (a nested checkout's, the repository's above a project in a subdirectory, reached
through a link too), in any letter case, as for the file tools (confine.in_sensitive_dir). Tilde
prefixes are expanded as bash expands them (`~+` and `~0` the directory the command runs in, `~-`
`$OLDPWD`, after `=` and `:`). `git config` counts as a write into `.git/`, which it is, unnamed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .confine import AGENT_DIR, SENSITIVE_DIRS, in_agent_dir, in_sensitive_dir, is_within, real

OPERATOR_CHARS = frozenset("|&;()<>\n")
BLANKS = frozenset(" \t")
GLOB_CHARS = frozenset("*?[")
PROTECTED_DIRS = (AGENT_DIR, *SENSITIVE_DIRS)

Char = tuple[str, bool]  # a character of a word, and whether it was quoted


class ShellSyntaxError(ValueError):
    """The command cannot be cut into words (an unbalanced quote)."""


@dataclass(frozen=True)
class Word:
    parts: tuple[tuple[str, bool], ...]  # (text, quoted)

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.parts)

    @property
    def is_pattern(self) -> bool:
        """Whether bash would expand it as a pathname pattern (an unquoted `*`, `?` or `[`)."""
        return any(not quoted and GLOB_CHARS & set(text) for text, quoted in self.parts)

    def starts_unquoted(self, chars: str) -> bool:
        """Whether the word's first character is one of `chars`, unquoted (`~`, `#`: bash reads them)."""
        for text, quoted in self.parts:
            if text:
                return not quoted and text[0] in chars
        return False

    def chars(self) -> list[Char]:
        """Each character with whether it was quoted: what bash's pattern matching sees."""
        return [(c, quoted) for text, quoted in self.parts for c in text]


def split_words(command: str) -> list[Word | str]:
    """Words and operator strings (`|`, `&&`, `;`, `>`...), in order; ShellSyntaxError on an open quote."""
    out: list[Word | str] = []
    parts: list[tuple[str, bool]] = []
    current: list[str] = []
    in_word = False
    i, n = 0, len(command)

    def flush_part(quoted: bool = False) -> None:
        if current:
            parts.append(("".join(current), quoted))
            current.clear()

    while i < n:
        char = command[i]
        if char in "'\"":
            end = command.find(char, i + 1)
            if end < 0:
                raise ShellSyntaxError(f"no closing quote ({char})")
            flush_part()
            parts.append((command[i + 1:end], True))
            in_word = True
            i = end + 1
            continue
        if char in BLANKS or char in OPERATOR_CHARS:
            flush_part()
            if in_word:
                out.append(Word(tuple(parts)))
                parts = []
                in_word = False
            if char in OPERATOR_CHARS:
                j = i
                while j < n and command[j] in OPERATOR_CHARS and command[j] != "\n":
                    j += 1
                out.append(command[i:max(j, i + 1)])
                i = max(j, i + 1)
            else:
                i += 1
            continue
        current.append(char)
        in_word = True
        i += 1
    flush_part()
    if in_word:
        out.append(Word(tuple(parts)))
    return out


def expand(word: Word, root: Path | str) -> tuple[list[str], bool]:
    """(the words bash would pass for `word`, whether they are pathname matches) — see the module docstring."""
    if not word.is_pattern:
        return [word.text], False
    matches = bash_glob(word.chars(), root)
    if not matches:
        return [word.text], False
    return matches, True


# bash's character classes (`[[:alpha:]]`) in a UTF-8 locale, as far as a file name needs them.
_CLASSES: dict[str, Callable[[str], bool]] = {
    "alpha": str.isalpha, "digit": lambda c: c in "0123456789", "alnum": str.isalnum, "upper": str.isupper,
    "lower": str.islower, "space": str.isspace, "blank": lambda c: c in " \t", "print": str.isprintable,
    "graph": lambda c: c.isprintable() and not c.isspace(), "cntrl": lambda c: not c.isprintable(),
    "punct": lambda c: c.isprintable() and not c.isspace() and not c.isalnum(),
    "xdigit": lambda c: c in "0123456789abcdefABCDEF", "word": lambda c: c.isalnum() or c == "_",
}
Test = Callable[[str], bool]
Token = tuple[str, "str | Test | None"]  # ("char", c), ("any", None), ("star", None), ("set", test)


def _class_test(kind: str, name: str) -> Test:
    """`[:name:]`, `[=c=]` or `[.c.]` inside brackets; one this module does not know matches anything."""
    if kind == ":" and name in _CLASSES:
        return _CLASSES[name]
    if kind in "=." and len(name) == 1:
        return _is(name)
    return lambda c: True


def _is(member: str) -> Test:
    return lambda c: c == member


def _in_range(low: str, high: str) -> Test:
    return lambda c: low <= c <= high


def _range_end(chars: list[Char], j: int) -> tuple[str, int]:
    """The end of a range at `chars[j]` and the index after it: a character, or one spelled as a collating symbol
    of one character (`[!a-[.-.]]`: bash reads `a` to `-`, an empty range, so the negation matches any character;
    an equivalence class ends no range there)."""
    n = len(chars)
    if (chars[j] == ("[", False) and j + 4 < n and chars[j + 1] == (".", False) and chars[j + 3] == (".", False)
            and chars[j + 4] == ("]", False)):
        return chars[j + 2][0], j + 5
    return chars[j][0], j + 1


def _bracket(chars: list[Char], i: int) -> tuple[Test, int] | None:
    """The bracket expression opening at `chars[i]` (an unquoted `[`): its test and the index after its `]`;
    None when no unquoted `]` closes it (bash then reads the `[` as itself)."""
    n, j = len(chars), i + 1
    negate = j < n and chars[j] in (("!", False), ("^", False))
    j += negate
    tests: list[Test] = []
    first = True
    while j < n:
        c, quoted = chars[j]
        if c == "]" and not quoted and not first:
            return (lambda ch: any(t(ch) for t in tests) != negate), j + 1
        first = False
        if c == "[" and not quoted and j + 1 < n and chars[j + 1][0] in ":=." and not chars[j + 1][1]:
            kind, k = chars[j + 1][0], j + 2
            while k + 1 < n and not (chars[k] == (kind, False) and chars[k + 1] == ("]", False)):
                k += 1
            if k + 1 < n:
                tests.append(_class_test(kind, "".join(ch for ch, _ in chars[j + 2:k])))
                j = k + 2
                first = negate and kind == "="  # bash 5.2: `[![=x=]]]` holds `]`, closing at the second
                continue
        if j + 2 < n and chars[j + 1] == ("-", False) and chars[j + 2] != ("]", False):
            end, after = _range_end(chars, j + 2)
            tests.append(_in_range(c, end))
            j = after
            continue
        tests.append(_is(c))
        j += 1
    return None


def _tokens(chars: list[Char]) -> list[Token]:
    """One path segment's pattern, as bash reads it."""
    out: list[Token] = []
    i = 0
    while i < len(chars):
        c, quoted = chars[i]
        if not quoted and c == "*":
            out.append(("star", None))
        elif not quoted and c == "?":
            out.append(("any", None))
        elif not quoted and c == "[" and (found := _bracket(chars, i)) is not None:
            out.append(("set", found[0]))
            i = found[1]
            continue
        else:
            out.append(("char", c))
        i += 1
    return out


def _matches(tokens: list[Token], name: str) -> bool:
    """Whether `name` (one file name) matches the segment `tokens`; a leading dot only by a literal one."""
    if name.startswith(".") and (not tokens or tokens[0] != ("char", ".")):
        return False
    t = k = 0
    star_t, star_k = -1, 0
    while k < len(name):
        if t < len(tokens) and tokens[t][0] == "star":
            star_t, star_k = t, k
            t += 1
            continue
        if t < len(tokens) and _one(tokens[t], name[k]):
            t += 1
            k += 1
            continue
        if star_t < 0:
            return False
        t, star_k = star_t + 1, star_k + 1
        k = star_k
    return all(kind == "star" for kind, _ in tokens[t:])


def _one(token: Token, c: str) -> bool:
    kind, value = token
    if kind == "char":
        return value == c
    if kind == "any":
        return True
    return kind == "set" and callable(value) and value(c)


def _is_pattern(chars: list[Char]) -> bool:
    return any(not quoted and c in GLOB_CHARS for c, quoted in chars)


def _segments(chars: list[Char]) -> list[list[Char]]:
    out: list[list[Char]] = [[]]
    for char in chars:
        if char[0] == "/":
            out.append([])
        else:
            out[-1].append(char)
    return out


def bash_glob(chars: list[Char], root: Path | str) -> list[str]:
    """The paths (relative to `root` unless absolute) bash's pathname expansion makes of the pattern, sorted."""
    results = [""]
    for index, segment in enumerate(_segments(chars)):
        sep = "/" if index else ""
        if not _is_pattern(segment):
            results = [r + sep + "".join(c for c, _ in segment) for r in results]
            continue
        tokens = _tokens(segment)
        found: list[str] = []
        for r in results:
            try:
                with os.scandir(os.path.join(root, r + sep) if r + sep else root) as entries:
                    names = [e.name for e in entries]
            except OSError:
                continue
            found += [r + sep + name for name in sorted(names) if _matches(tokens, name)]
        if not found:
            return []
        results = found
    return sorted(r for r in results if os.path.lexists(os.path.join(root, r)))


def _segment_may_be(segment: list[Char], name: str) -> bool:
    if not _is_pattern(segment):  # `.GIT` is `.git` on a case-insensitive file system (macOS's default)
        return "".join(c for c, _ in segment).casefold() == name
    return _matches(_tokens(segment), name)


def protected_dir(command: str, root: Path | str, cwd: Path | str | None = None) -> str | None:
    """`.git` or `.evo-agent` when a word of `command` may be a path inside it (see the module docstring).

    `cwd`: where the command runs (the start directory; default `root`), what its relative paths mean."""
    try:
        tokens = split_words(command)
    except ShellSyntaxError:
        tokens = [Word(((w, False),)) for w in command.replace("'", " ").replace('"', " ").split()]
    from evo_agent.session import user_config_dir

    if _runs_git_config(tokens):
        return ".git"
    project = real(root)
    base = real(cwd) if cwd is not None else project
    config = real(user_config_dir())
    for token in tokens:
        if isinstance(token, str):
            continue
        for candidate in _path_candidates(token.chars()):
            found = _protected_candidate(candidate, token.is_pattern, project, base, config)
            if found:
                return found
    return None


# git's options before its subcommand that take the next word as their value (`git -C dir config`).
_GIT_VALUE_OPTIONS = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--config-env",
                                "--super-prefix", "--exec-path", "--list-cmds", "--attr-source"})


_GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                               "--get-colorbool", "-l", "--list"})


def _runs_git_config(tokens: list[Word | str]) -> bool:
    """Whether some command runs `git config` (however git is reached: `env git`, `/usr/bin/git`, `git -C .`).

    It writes `.git/config` (or `~/.gitconfig`) without naming it: `git config core.fsmonitor "sh x.sh"` makes
    the user's next `git status` run the script, as a write into `.git/` does."""
    commands: list[list[str]] = [[]]
    for token in tokens:  # the simple commands: what lies between two operators
        if isinstance(token, Word):
            commands[-1].append(token.text)
        else:
            commands.append([])
    return any(_git_config_writes(words) for words in commands)


def _git_config_writes(words: list[str]) -> bool:
    """Whether the simple command `words` runs `git config` with anything but a read (`--get`, `--list`, `get`):
    git takes one action at a time, so a read writes nothing."""
    for i, word in enumerate(words):
        at = _git_subcommand_at(words[i + 1:]) if word.rsplit("/", 1)[-1] == "git" else None
        if at is None or words[i + 1 + at] != "config":
            continue
        after = words[i + 2 + at:]
        if not (_GIT_CONFIG_READS & set(after) or git_subcommand(after) in ("get", "list")):
            return True
    return False


def git_subcommand(args: list[str]) -> str | None:
    """The subcommand among git's arguments: the first word that is no option nor an option's value."""
    at = _git_subcommand_at(args)
    return None if at is None else args[at]


def git_subcommand_at(args: list[str]) -> int | None:
    """Where the subcommand stands among git's arguments (None: there is none)."""
    return _git_subcommand_at(args)


def _git_subcommand_at(args: list[str]) -> int | None:
    j = 0
    while j < len(args) and args[j].startswith("-"):
        j += 2 if args[j] in _GIT_VALUE_OPTIONS else 1
    return j if j < len(args) else None


def _path_candidates(chars: list[Char]) -> list[list[Char]]:
    """The word, and what follows `=` or a short option's letter (`--output=.git/x`, `-o.git/x`)."""
    out = [chars]
    equals = next((i for i, (c, _) in enumerate(chars) if c == "="), None)
    if chars and chars[0][0] == "-":
        out.append(chars[equals + 1:] if equals is not None else [])
        out.append(chars[2:])
    elif equals is not None:
        out.append(chars[equals + 1:])
    return [c for c in out if c]


def _protected_candidate(chars: list[Char], is_pattern: bool, project: Path, base: Path, config: Path) -> str | None:
    segments = [s for s in _segments(chars) if s]
    for name in PROTECTED_DIRS:
        if any(_segment_may_be(s, name) for s in segments):
            return name
    if any(c in "$`" for c, _ in chars):
        return None
    for piece in _pieces(chars):
        piece = _tilde(piece, base)
        paths = ["".join(c for c, _ in piece), *(bash_glob(piece, base) if is_pattern else [])]
        for path in paths:
            full = real(os.path.join(base, path))
            if in_agent_dir(project, full):
                return AGENT_DIR
            if in_sensitive_dir(project, full) or any(part.casefold() == ".git" for part in full.parts):
                return ".git"  # any `.git`, in any case: the project's, a nested one's, the repository's above it
            if is_within(full, config):  # the user's own grants, for every project: wider than `.evo-agent/`
                return str(config)
    return None


def _pieces(chars: list[Char]) -> list[list[Char]]:
    """The word, and each piece between its colons: bash expands a `~` after a `:` too (`x=a:~+/b`)."""
    pieces: list[list[Char]] = [[]]
    for char in chars:
        if char == (":", False):
            pieces.append([])
        else:
            pieces[-1].append(char)
    return [chars, *pieces[1:]] if len(pieces) > 1 else [chars]


def _tilde(chars: list[Char], base: Path) -> list[Char]:
    """The word after bash's tilde expansion of its unquoted prefix: `~` and `~user` a home directory, `~+`,
    `~0` and `~+0` the directory the command runs in (`base`), `~-` and `~-0` `$OLDPWD` (which the command
    inherits)."""
    if not chars or chars[0] != ("~", False):
        return chars
    end = next((i for i, (c, _) in enumerate(chars) if c == "/"), len(chars))
    if any(quoted for _, quoted in chars[:end]):
        return chars  # a quoted character in the prefix: bash expands nothing
    prefix = "".join(c for c, _ in chars[:end])
    if prefix in ("~+", "~0", "~+0"):
        expanded = str(base)
    elif prefix in ("~-", "~-0"):
        expanded = os.environ.get("OLDPWD", prefix)
    else:
        expanded = os.path.expanduser(prefix)
    return [(c, True) for c in expanded] + chars[end:]


__all__ = ["Char", "ShellSyntaxError", "Word", "bash_glob", "expand", "git_subcommand", "git_subcommand_at",
           "protected_dir", "split_words"]
