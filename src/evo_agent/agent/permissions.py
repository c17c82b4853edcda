"""Which tool calls run unasked, which ask, which are refused (SPEC §9, issue #15).

`Policy.check(tool, input)` is a pure decision from the permission mode and the allow rules:

| call                                   | ask   | accept-edits | read-only | bypass |
|----------------------------------------|-------|--------------|-----------|--------|
| read_file/glob/grep inside the project | run   | run          | run       | run    |
| ... outside the project                | ask   | ask          | ask       | run    |
| bash, read-only by shell_readonly      | run   | run          | run       | run    |
| bash, anything else                    | ask   | ask          | refused   | run    |
| write_file/edit_file inside            | ask   | run          | refused   | run    |
| ... in .git/ or outside the project    | ask   | ask          | refused   | run    |
| ... to a file with other hard links    | ask   | ask          | refused   | run    |
| write_file/edit_file in .evo-agent/    | refused in every mode                      |
| ... in ~/.config/evo-agent/ (the user's)| refused in every mode                      |
| bash that may touch .evo-agent/, .git/, ~/.config/evo-agent/ (not r/o) | ask, even under a rule | refused | run |
| plan_* tools (only .evo-agent/tasks/)  | run   | run          | reads run, changes refused | run |
| memory view                            | run   | run          | run       | run    |
| memory writes, /memories/project/      | ask   | run          | refused   | run    |
| memory writes, /memories/user/         | ask   | ask          | refused   | run    |

A memory write asks like a file write, its approval showing the diff; one to the user's memory asks even in
accept-edits: it is outside the project and reaches every project's sessions (what one repository's content
could make the model write there would follow the user everywhere).

"May touch" is decided on resolved paths (shell_words.protected_dir: globs, `..`, symlinks, option
values), not on substrings. A read-only verdict carries the plan the bash tool runs (Verdict.plan).

A matching allow rule turns "ask" into "run" (never "refused" into anything). Rules come from
`.evo-agent/settings.json`, `--allowed-tools`, and "always" answers (see rules.py).

`PermissionGate.decide` applies a verdict: it asks the front end (`on_approval`) one request at
a time — parallel subagents share one gate and queue on its lock — re-checking the rules after
the lock is taken, since an "always" answer given meanwhile may already cover the call.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

from evo_agent.safe_text import terminal_safe
from evo_agent.session import one_line
from evo_agent.session import plain_dataclass as dataclass
from evo_agent.session import plain_field as field
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest
from evo_agent.tools.confine import (
    AGENT_DIR,
    in_agent_dir,
    in_sensitive_dir,
    in_user_config,
    relative_posix,
    resolve_in,
)
from evo_agent.tools.memory_tool import memory_path
from evo_agent.tools.registry import call_path, facts_of

from .rules import RULE_KINDS, Rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Literal

    from evo_agent.session import MemoryStore

    Action = Literal["allow", "ask", "deny"]

MODES = ("ask", "accept-edits", "read-only", "bypass")
DEFAULT_MODE = "ask"

Asker = Callable[[ApprovalRequest], ApprovalDecision]


class ModeError(ValueError):
    """An unknown permission mode; one printable line."""


def check_mode(value: str, where: str = "--permission-mode") -> str:
    mode = value.strip().lower()
    if mode not in MODES:
        raise ModeError(f"{where} must be one of {', '.join(MODES)}, not {value.strip()[:30]!r}")
    return mode


@dataclass(frozen=True)
class Verdict:
    action: Action
    rule: str              # what decided: "mode ask: read inside the project", "rule Bash(npm test)", ...
    reason: str = ""       # why it asks or is refused, completing "needs approval because it ..."
    suggestion: Rule | None = None  # the rule an "always" answer would add
    plan: object = None    # a read-only bash command: the ReadOnlyPlan the bash tool runs (shell_readonly); a str:
    #                        the command a rule approved as it runs (shell_readonly.plan_ruled_git)


@dataclass
class Target:
    """What a call touches, as far as permissions care."""

    kind: str | None                 # "Bash", "Edit", "Read" or None (a tool the policy does not know)
    command: str = ""
    path: Path | None = None         # resolved (symlinks followed)
    relative: str | None = None      # project-relative when inside the project
    shown: str = ""                  # as the user should read it


class Policy:
    def __init__(self, project_dir: Path | str, mode: str = DEFAULT_MODE, rules: list[Rule] | None = None,
                 project_rules: list[Rule] | None = None) -> None:
        self.project_dir = Path(project_dir)
        self.mode = check_mode(mode)
        self.cli_rules = list(rules or [])          # --allowed-tools: this run only
        self.project_rules = list(project_rules or [])  # .evo-agent/settings.json
        self.session_rules: list[Rule] = []         # "always in this session"
        self.memory_store: MemoryStore | None = None  # the agent's session.MemoryStore: what a memory approval previews
        # Where the tools run and relative paths point: the start directory (set by the agent), else the
        # project. What is "inside the project" is judged against the project whatever this says.
        self.cwd: Path | None = None
        # MCP tools annotated readOnlyHint by a server whose entry trusts that (mcp_context.py): they run unasked.
        self.read_only_tools: set[str] = set()

    @property
    def work_dir(self) -> Path:
        return self.cwd if self.cwd is not None else self.project_dir

    @property
    def rules(self) -> list[Rule]:
        return self.cli_rules + self.project_rules + self.session_rules

    def describe(self) -> str:
        """What `/permissions` shows."""
        lines = [f"Permission mode: {self.mode} ({MODE_SUMMARY[self.mode]})"]
        for title, rules in (("this run (--allowed-tools)", self.cli_rules),
                             ("this project (yours, and a trusted .evo-agent/settings.json)", self.project_rules),
                             ("this session", self.session_rules)):
            lines.append(f"Allowed for {title}: " + (", ".join(map(str, rules)) if rules else "none"))
        return "\n".join(lines)

    # ---- the decision
    def target(self, name: str, tool_input: dict[str, Any]) -> Target:
        kind = RULE_KINDS.get(facts_of(name).approval)
        if kind == "Bash":
            command = tool_input.get("command")
            return Target(kind, command=command if isinstance(command, str) else "")
        if kind is None:
            return Target(None)
        raw = call_path(name, tool_input)
        path = resolve_in(self.work_dir, raw)
        rel = relative_posix(self.project_dir, path)
        return Target(kind, path=path, relative=rel, shown=rel if rel is not None else str(path))

    def check(self, name: str, tool_input: dict[str, Any]) -> Verdict:
        facts = facts_of(name)
        if facts.approval == "none":  # no side effects of their own; a subagent's calls are gated one by one
            return Verdict("allow", "internal tool")
        if facts.approval == "plan":  # they change only .evo-agent/tasks/: unasked in every mode but read-only
            if self.mode == "read-only" and facts.kind != "read":
                return Verdict("deny", "mode read-only", f"{name} changes the Session Plan (read-only mode)")
            return Verdict("allow", f"mode {self.mode}: the Session Plan")
        if facts.approval == "memory":
            return self._check_memory(tool_input)
        if facts.approval == "mcp":
            return self._check_mcp(name)
        target = self.target(name, tool_input)
        if target.kind == "Bash":
            return self._check_bash(target.command)
        if target.kind is None:
            if self.mode == "bypass":
                return Verdict("allow", "mode bypass")
            if self.mode == "read-only":
                return Verdict("deny", "mode read-only", f"the tool {name} may have side effects (read-only mode)")
            return Verdict("ask", f"mode {self.mode}", f"the tool {name} may have side effects")
        if target.kind == "Edit":
            return self._check_edit(target)
        return self._check_read(target)

    def _matching(self, check: Callable[[Rule], bool]) -> Rule | None:
        return next((r for r in self.rules if check(r)), None)

    def _check_mcp(self, name: str) -> Verdict:
        """An MCP tool asks like bash: a rule (`mcp__server__tool`, `mcp__server__*`) lets it run, read-only mode
        refuses it — unless its server marks it readOnlyHint and the user's config trusts that mark."""
        if self.mode == "bypass":
            return Verdict("allow", "mode bypass")
        if name in self.read_only_tools:
            return Verdict("allow", f"mode {self.mode}: MCP tool marked read-only (trustReadOnlyHint)")
        if self.mode == "read-only":
            return Verdict("deny", "mode read-only", f"the MCP tool {name} may have side effects (read-only mode)")
        rule = self._matching(lambda r: r.covers_tool(name))
        if rule is not None:
            return Verdict("allow", f"rule {rule}")
        return Verdict("ask", f"mode {self.mode}", f"the MCP tool {name} may have side effects", Rule("MCP", name))

    def _check_bash(self, command: str) -> Verdict:
        if self.mode == "bypass":
            return Verdict("allow", "mode bypass")
        # Here, not at the top: the shell analysis is a fifth of the agent's imports, and a session
        # that runs no command (`-p hi`) never needs it (issue #30: start-up).
        from evo_agent.tools.shell_readonly import plan_read_only
        from evo_agent.tools.shell_words import protected_dir

        plan = plan_read_only(command, self.project_dir, cwd=self.work_dir)
        if not isinstance(plan, str):
            return Verdict("allow", f"mode {self.mode}: read-only command", plan=plan)
        why = plan
        if self.mode == "read-only":
            return Verdict("deny", "mode read-only", f"the command {why} (read-only mode runs only read-only commands)")
        # "Always" adds `Bash(<the command>)`; one ending in `:*` would read as a prefix rule (`python3:*`: any
        # Python), so such a command is allowed once at most. So is one whose rule does not read back as itself
        # (`echo hi),Bash,Read(x`: pasted into --allowed-tools, which splits at commas, a bare `Bash` beside it).
        exact = command.strip()
        suggestion = Rule("Bash", exact) if exact and not exact.endswith(":*") else None
        if suggestion is not None and _reads_back(suggestion) != [suggestion]:
            suggestion = None
        protected = (protected_dir(command, self.project_dir, self.work_dir)
                     or (AGENT_DIR if AGENT_DIR in command else None))
        if protected is not None:
            what = {AGENT_DIR: "the agent's transcripts and rules",
                    ".git": "git runs hooks and configuration from there"}.get(
                protected, "your own evo-agent settings: MCP servers, rules and trust for every project")
            return Verdict("ask", f"mode {self.mode}: may touch {protected}",
                           f"the command may write {protected}/ ({what})", None)
        rule = self._matching(lambda r: r.covers_command(command, self.work_dir))
        if rule is not None:
            # read-only git runs with unasked git's protection, whatever options the rule let through
            from evo_agent.tools.shell_readonly import plan_ruled_git

            return Verdict("allow", f"rule {rule}", plan=plan_ruled_git(command, self.project_dir, self.work_dir))
        return Verdict("ask", f"mode {self.mode}", f"the command {why}", suggestion)

    def _check_memory(self, tool_input: dict[str, Any]) -> Verdict:
        """Auto Memory: view runs; a write asks like a file edit (the user's memory even in accept-edits)."""
        command = tool_input.get("command")
        if command == "view":
            return Verdict("allow", f"mode {self.mode}: memory view")
        path = memory_path(tool_input)
        where = _memory_scope(path)
        if self.mode == "bypass":
            return Verdict("allow", "mode bypass")
        if self.mode == "read-only":
            return Verdict("deny", "mode read-only", f"memory {command} changes Auto Memory (read-only mode)")
        if self.mode == "accept-edits" and where == "project":
            return Verdict("allow", "mode accept-edits: project memory")
        reason = ("it changes the user's own memory, which every project's sessions read" if where == "user"
                  else f"it changes Auto Memory ({path})")
        return Verdict("ask", f"mode {self.mode}", reason)

    def _check_edit(self, t: Target) -> Verdict:
        assert t.path is not None
        if in_agent_dir(self.project_dir, t.path):
            return Verdict("deny", "agent directory",
                           f"{t.shown} is in {AGENT_DIR}/, which holds the agent's own transcripts and rules: "
                           "tools may read it but never write it")
        if in_user_config(t.path):
            return Verdict("deny", "user config", f"{t.shown} is in the user's own evo-agent config, which grants "
                           "MCP servers, rules and trust in every project: tools may read it but never write it")
        if self.mode == "bypass":
            return Verdict("allow", "mode bypass")
        if self.mode == "read-only":
            return Verdict("deny", "mode read-only", f"editing {t.shown} has side effects (read-only mode)")
        sensitive = t.relative is not None and in_sensitive_dir(self.project_dir, t.path)
        links = _other_links(t.path)
        if not sensitive and not links:
            rule = self._matching(lambda r: r.covers_path("Edit", t.relative, str(t.path)))
            if rule is not None:
                return Verdict("allow", f"rule {rule}")
        if t.relative is None:
            return Verdict("ask", f"mode {self.mode}", f"{t.shown} is outside the project",
                           _exact_rule("Edit", str(t.path)) if not links else None)
        if sensitive:
            return Verdict("ask", f"mode {self.mode}", f"{t.shown} is in .git/, which can make git run commands", None)
        if links:
            return Verdict("ask", f"mode {self.mode}",
                           f"{t.shown} has {links} other hard link{'s' if links > 1 else ''}, which the write changes "
                           "too, wherever they are (a package manager's cache shared by every project, another "
                           "checkout)", None)
        if self.mode == "accept-edits":
            return Verdict("allow", "mode accept-edits: edit inside the project")
        return Verdict("ask", f"mode {self.mode}", f"it changes {t.shown}", _exact_rule("Edit", t.relative))

    def _check_read(self, t: Target) -> Verdict:
        assert t.path is not None
        if t.relative is not None:
            return Verdict("allow", f"mode {self.mode}: read inside the project")
        if self.mode == "bypass":
            return Verdict("allow", "mode bypass")
        rule = self._matching(lambda r: r.covers_path("Read", None, str(t.path)))
        if rule is not None:
            return Verdict("allow", f"rule {rule}")
        # As narrow as what was asked: the file read, or the tree a glob/grep searches — never a parent.
        spec = f"{t.path}/**" if _is_dir(t.path) else str(t.path)
        return Verdict("ask", f"mode {self.mode}", f"{t.shown} is outside the project", _exact_rule("Read", spec))


def _is_dir(path: Path) -> bool:
    """Whether `path` is a directory; False for any path the system cannot stat (a model's name longer than 255
    bytes: pathlib's is_dir() raises ENAMETOOLONG, and that ended the whole run with an internal error)."""
    import stat

    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _other_links(path: Path) -> int:
    """How many other names (hard links) the regular file `path` has: a file tool writes in place, so a write
    changes them all. uv and pnpm fill `.venv/` and `node_modules/` with hard links into a cache every project
    on the machine shares."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_nlink - 1 if stat.S_ISREG(st.st_mode) else 0


def _memory_scope(path: object) -> str | None:
    """"project" or "user" for a memory path, else None (the tool refuses it before anyone is asked)."""
    from evo_agent.session import MemoryRefused, parse_memory_path

    try:
        return parse_memory_path(path)[0]
    except MemoryRefused:
        return None


def _exact_rule(kind: str, spec: str) -> Rule | None:
    """The rule naming exactly `spec`; None (no "always" offered) when the name itself holds glob characters
    (`*`, `?`), which a rule would read as a pattern matching other files too."""
    literal = spec[:-3] if spec.endswith("/**") else spec
    if any(c in literal for c in "*?"):
        return None
    rule = Rule(kind, spec)
    return rule if _reads_back(rule) == [rule] else None  # a file named `a),Bash,Edit(b` offers nothing


def _reads_back(rule: Rule) -> list[Rule]:
    """The rules `--allowed-tools` (which splits at commas outside parentheses) makes of `rule`'s text: an
    "always" is offered, and its option suggested, only when that is the rule itself."""
    from .rules import RuleError, parse_rules

    try:
        return parse_rules(str(rule))
    except RuleError:
        return []


MODE_SUMMARY = {
    "ask": "reads in the project and read-only commands run; everything else asks",
    "accept-edits": "as ask, and file edits inside the project run too",
    "read-only": "nothing with side effects runs",
    "bypass": "everything runs unasked",
}


# ---- asking -------------------------------------------------------------------------------------


@dataclass
class GateResult:
    run: bool
    decision: str          # "allowed" | "refused"
    rule: str              # what decided
    message: str = ""      # for a refused call: the tool_result text the model reads
    notice: str = ""       # for the user when a call is refused without asking (print mode), terminal-safe
    path: Path | None = None  # a file tool's real path as checked: the tool opens exactly this
    plan: object = None    # a bash call run unasked: the ReadOnlyPlan the bash tool runs


@dataclass
class PermissionGate:
    """Applies `Policy` verdicts, asking through the front end one request at a time."""

    policy: Policy
    persist: Callable[[Rule], object] | None = None  # keeps "always in this project" rules (the user's config)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def mode(self) -> str:
        return self.policy.mode

    def decide(self, name: str, tool_input: dict[str, Any], ask: Asker | None, agent: str = "") -> GateResult:
        checked = self._checked_path(name, tool_input)  # before any question: what the user approves
        result = self._decide(name, tool_input, ask, agent)
        result.path = checked
        return result

    def _checked_path(self, name: str, tool_input: dict[str, Any]) -> Path | None:
        if not facts_of(name).opens_path:
            return None
        try:
            return self.policy.target(name, tool_input).path
        except (OSError, ValueError):
            return None

    def _decide(self, name: str, tool_input: dict[str, Any], ask: Asker | None, agent: str) -> GateResult:
        verdict = self.policy.check(name, tool_input)
        if verdict.action != "ask":
            return _settled(verdict)
        if ask is None:
            return self._cannot_ask(name, tool_input, verdict)
        with self._lock:
            verdict = self.policy.check(name, tool_input)  # an answer given meanwhile may cover it now
            if verdict.action != "ask":
                return _settled(verdict)
            request = build_request(self.policy, name, tool_input, verdict, agent)
            try:
                answer = ask(request)
            except Exception:  # noqa: BLE001 - a front end that fails to ask has not said yes
                answer = ApprovalDecision("no", "")
            return self._apply(answer, verdict)

    def _apply(self, answer: ApprovalDecision, verdict: Verdict) -> GateResult:
        kind = getattr(answer, "answer", "no")
        rule = verdict.suggestion
        if kind in ("always-session", "always-project") and rule is not None:
            if kind == "always-session":
                self.policy.session_rules.append(rule)
                return GateResult(True, "allowed", f"user: always in this session {rule}")
            self.policy.project_rules.append(rule)
            if self.persist is not None:
                try:
                    self.persist(rule)
                except Exception as exc:  # noqa: BLE001 - the approval stands for this run
                    return GateResult(True, "allowed", f"user: always in this project {rule} (not saved: {exc})")
            return GateResult(True, "allowed", f"user: always in this project {rule}")
        if kind in ("yes", "always-session", "always-project"):
            return GateResult(True, "allowed", "user: yes")
        reason = " ".join(str(getattr(answer, "message", "") or "").split())
        from evo_agent.tools.approval import REFUSED

        text = REFUSED
        if reason:
            text += f" Their reason: {reason}"
        else:
            text += " Ask them what to do instead, or take another approach."
        return GateResult(False, "refused", "user: no", text)

    def _cannot_ask(self, name: str, tool_input: dict[str, Any], verdict: Verdict) -> GateResult:
        what = describe_call(self.policy, name, tool_input)
        message = (f"Not run: {what} needs the user's approval because {verdict.reason}, and this session "
                   "cannot ask (print mode). Do the task without it if you can; otherwise tell the user "
                   "what you need to run and that it must be allowed.")
        import shlex  # only when a call is refused

        # Quoted for the shell: a rule holds the model's command, whose `$(…)` would run when the line is pasted.
        rule = f"--allowed-tools {shlex.quote(str(verdict.suggestion))}" if verdict.suggestion else \
            "--allowed-tools RULE"
        target = self.policy.target(name, tool_input)
        # accept-edits only where it would allow the call: never suggested when it is already the mode
        edit_inside = self.mode != "accept-edits" and (
            (target.kind == "Edit" and target.relative is not None)
            or (facts_of(name).approval == "memory" and _memory_scope(tool_input.get("path")) == "project"))
        mode = "accept-edits" if edit_inside else "bypass"
        notice = terminal_safe(f"evo-agent: not run (needs approval): {what}; allow it with --permission-mode "
                               f"{mode}, {rule} or a rule in .evo-agent/settings.json", keep_newlines=False)
        return GateResult(False, "refused", f"{verdict.rule}: cannot ask", message, notice)


def _settled(verdict: Verdict) -> GateResult:
    """The result of a verdict that needs nobody's answer."""
    if verdict.action == "allow":
        return GateResult(True, "allowed", verdict.rule, plan=verdict.plan)
    return GateResult(False, "refused", verdict.rule, f"Not run: {verdict.reason}.")


def describe_call(policy: Policy, name: str, tool_input: dict[str, Any]) -> str:
    """One line naming the tool and what it will do."""
    facts = facts_of(name)
    if facts.approval == "memory":
        return one_line(f"{name} {tool_input.get('command')} {memory_path(tool_input)}", 200)
    target = policy.target(name, tool_input)
    if target.kind == "Bash":
        return f"{name} `{one_line(target.command, 200)}`"
    if target.kind is not None:
        return f"{name} ({facts.verb} {target.shown})" if facts.verb else f"{name} {target.shown}"
    if facts.approval == "mcp":
        return f"the MCP tool {name}"
    return f"the tool {name}"


def build_request(
    policy: Policy, name: str, tool_input: dict[str, Any], verdict: Verdict, agent: str
) -> ApprovalRequest:
    """The question for a call, with every character no terminal draws (tag characters, zero-width runs,
    bidi controls: session.reveal_invisible) written as a visible escape: `exec(''.join(… for c in '…'))`
    must not read as the exec of an empty string, nor a diff hide the orders it writes into AGENTS.md."""
    from evo_agent.session import reveal_invisible

    request = _build_request(policy, name, tool_input, verdict, agent)
    (summary, a), (detail, b), (rule, c) = (reveal_invisible(t) for t in (request.summary, request.detail,
                                                                           request.rule))
    if not (a or b or c):
        return request
    return ApprovalRequest(request.tool, summary, detail, request.agent, rule, request.reason)


def _build_request(
    policy: Policy, name: str, tool_input: dict[str, Any], verdict: Verdict, agent: str
) -> ApprovalRequest:
    facts = facts_of(name)
    if facts.approval == "memory":
        from evo_agent.session import MemoryStore
        from evo_agent.tools.memory_tool import preview

        summary, diff = preview(policy.memory_store or MemoryStore(policy.project_dir), tool_input)
        return ApprovalRequest(name, summary, diff, agent, "", verdict.reason)
    target = policy.target(name, tool_input)
    rule = str(verdict.suggestion) if verdict.suggestion else ""
    if target.kind == "Bash":
        from evo_agent.session import reveal_invisible

        # escaped here, before `single` is judged: a command that grew escapes is shown whole under its question
        # (the summary cut to 200 characters), not once in the summary and again, prefixed, as its detail
        command = reveal_invisible(_odd_blanks_shown(target.command))[0]
        single = "\n" not in command and len(command) <= 200 and command == target.command
        return ApprovalRequest(name, f"run: {one_line(command, 200)}", "" if single else command, agent, rule,
                               verdict.reason)
    if target.kind == "Edit":
        return ApprovalRequest(name, f"{facts.verb or 'change'} {target.shown}", _edit_diff(name, tool_input, target),
                               agent, rule, verdict.reason)
    if target.kind == "Read":
        return ApprovalRequest(name, f"read {target.shown}", "", agent, rule, verdict.reason)
    # Whole (never cut: a payload after padding would be approved unseen); the front end shows what fits.
    detail = json.dumps(tool_input, ensure_ascii=False, indent=2)
    return ApprovalRequest(name, f"call {name}", detail, agent, rule, verdict.reason)


def _odd_blanks_shown(command: str) -> str:
    """`command` with each blank but space, tab and newline spelled out (`⟨U+00A0⟩`): a terminal draws it as a
    space (or nothing), bash reads it as a letter of the word (`cat<NBSP>/etc/passwd` runs the repository's
    `cat<NBSP>/etc/passwd`), and the question must not show a harmless command instead."""
    if command.isascii() and not any(c in command for c in "\x0b\x0c\r\x1c\x1d\x1e\x1f"):
        return command
    return "".join(f"⟨U+{ord(c):04X}⟩" if c.isspace() and c not in " \t\n" else c for c in command)


def _edit_diff(name: str, tool_input: dict[str, Any], target: Target) -> str:
    """The unified diff the call would make (as far as it can be known before running it)."""
    assert target.path is not None
    try:
        old = target.path.read_text(encoding="utf-8", errors="replace") if target.path.is_file() else ""
    except OSError:
        old = ""
    change_of = facts_of(name).change_of
    before, after = (change_of(tool_input) if change_of else None) or ("", "")
    if before is None:  # the whole file replaced
        new = after
    elif before and old.count(before) == 1:
        new = old.replace(before, after, 1)
    else:
        old, new = before, after  # it will fail in the tool; show what was asked
    import difflib  # only when an edit is shown for approval

    # The name on one line, as the question's own first line shows it: a name holding newlines drew diff lines
    # of its own (`notes.md⏎+++ b/notes.md⏎@@ …⏎+harmless`) above the lines really written.
    name = terminal_safe(target.shown, keep_newlines=False)
    lines = list(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                      f"a/{name}", f"b/{name}"))
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    # Whole: the front end shows what fits and says how much more there is (never a silent cut).
    return "".join(lines).rstrip("\n") or "(no change)"


__all__ = [
    "DEFAULT_MODE",
    "GateResult",
    "MODES",
    "MODE_SUMMARY",
    "ModeError",
    "PermissionGate",
    "Policy",
    "Verdict",
    "build_request",
    "check_mode",
    "describe_call",
]
