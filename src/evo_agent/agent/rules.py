"""Allow rules: `Bash(npm test)`, `Bash(npm test:*)`, `Edit(src/**)`, `Read(/usr/share/**)`, `Edit`.

A rule names a kind of call and, in parentheses, what it covers:

- `Bash(cmd)` exactly that command; `Bash(prefix:*)` the prefix alone or followed by arguments,
  but only for a simple command (no `;`, `&`, `|`, `$`, backticks, redirection, newlines), so
  `Bash(npm test:*)` never covers `npm test; curl …`; nor an argument that is (or a glob that
  expands to) a writing or executing option the allowlist knows for the program
  (`find -delete`, `find -fprintf`, `sort --output`, `rg --pre`, `git diff --output`), nor a
  glob expanding to an option-like name. Bare `Bash` covers every command.
- `Edit(glob)` covers the tools whose approval class (their ToolFacts) is `edit` (write_file, edit_file),
  `Read(glob)` those of class `read` (read_file, glob, grep). A glob relative
  to the project matches project-relative paths (`*` within a segment, `**` across them); a
  glob starting with `/` or `~` matches absolute paths outside the project. Bare `Edit`/`Read`
  cover the whole project (never outside it).

- `mcp__server__tool` names one MCP tool, `mcp__server__*` (or a bare `mcp__server`) every tool of that
  server; `*` matches within a name.

Rules come from `.evo-agent/settings.json`, `--allowed-tools` and "always" answers.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from evo_agent.session import lazy_re
from evo_agent.session import plain_dataclass as dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from pathlib import Path

KINDS = ("Bash", "Edit", "Read")
RULE_KINDS = {"bash": "Bash", "edit": "Edit", "read": "Read"}  # a tool's approval class (ToolFacts) -> its rules' kind
_RULE_RE = lazy_re(r"\A(Bash|Edit|Read)(?:\((.*)\))?\Z", re.DOTALL)
_MCP_RULE_RE = lazy_re(r"\Amcp__[A-Za-z0-9_*-]+\Z")
_NOT_SIMPLE = lazy_re(r"[;&|<>$`\n\r(){}\\]")


class RuleError(ValueError):
    """A rule that does not parse; the message is one printable line."""


@dataclass(frozen=True)
class Rule:
    kind: str
    spec: str | None  # None: the bare kind

    @classmethod
    def parse(cls, text: str) -> Rule:
        if text.strip().startswith("mcp__"):
            if not _MCP_RULE_RE.match(text.strip()):
                raise RuleError(f"bad permission rule {text.strip()[:60]!r}: an MCP rule is mcp__server__tool or "
                                "mcp__server__* (letters, digits, _ and -)")
            return cls("MCP", text.strip())
        m = _RULE_RE.match(text.strip())
        if not m:
            raise RuleError(f"bad permission rule {text.strip()[:60]!r}: expected Bash(cmd), Bash(prefix:*), "
                            "Edit(glob), Read(glob), or a bare Bash, Edit or Read")
        spec = m.group(2)
        if spec is not None and not spec.strip():
            raise RuleError(f"bad permission rule {text.strip()!r}: empty parentheses")
        return cls(m.group(1), spec.strip() if spec is not None else None)

    def __str__(self) -> str:
        if self.kind == "MCP":
            return str(self.spec)
        return self.kind if self.spec is None else f"{self.kind}({self.spec})"

    def covers_tool(self, name: str) -> bool:
        """Whether an MCP rule covers the tool `name` (`mcp__server` alone: every tool of the server)."""
        if self.kind != "MCP" or not self.spec:
            return False
        spec = self.spec
        if "*" not in spec and spec.count("__") == 1:
            spec += "__*"
        return bool(re.fullmatch(".*".join(map(re.escape, spec.split("*"))), name))

    def covers_command(self, command: str, project_dir: Path | str | None = None) -> bool:
        """Whether the rule covers `command`; `project_dir` is where its globs expand (default: here)."""
        if self.kind != "Bash":
            return False
        if self.spec is None:
            return True
        command = command.strip()
        if self.spec.endswith(":*"):
            prefix = self.spec[:-2].strip()
            if _NOT_SIMPLE.search(command):
                return False
            if not (command == prefix or command.startswith(prefix + " ")):
                return False
            from evo_agent.tools.shell_readonly import prefix_rule_problem

            return prefix_rule_problem(command, prefix, project_dir or os.getcwd()) is None
        return command == self.spec

    def covers_path(self, kind: str, relative: str | None, absolute: str) -> bool:
        """`relative` is the project-relative path, None when the path is outside the project."""
        if self.kind != kind:
            return False
        if self.spec is None:
            return relative is not None
        spec = os.path.expanduser(self.spec)
        if os.path.isabs(spec):
            return glob_match(spec, absolute)
        return relative is not None and glob_match(spec, relative)


def parse_rules(texts: list[str] | str) -> list[Rule]:
    """Rules from a list, or from one comma-separated string (commas inside parentheses are kept)."""
    if isinstance(texts, str):
        texts = split_rule_list(texts)
    return [Rule.parse(t) for t in texts if t.strip()]


def split_rule_list(text: str) -> list[str]:
    """`Bash(npm test),Edit` -> ['Bash(npm test)', 'Edit']; commas within parentheses stay."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch == "," and depth == 0:
            out.append("".join(current))
            current = []
        else:
            current.append(ch)
    out.append("".join(current))
    return [s.strip() for s in out if s.strip()]


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("\\A" + "".join(parts) + "\\Z", re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    """`*` and `?` within one segment, `**` across segments (`src/**` matches everything under src)."""
    return bool(_glob_regex(pattern.rstrip("/") or "/").match(path))


__all__ = ["KINDS", "RULE_KINDS", "Rule", "RuleError", "glob_match", "parse_rules", "split_rule_list"]
