"""What a front end is asked when a tool call needs the user's approval (SPEC §9, issue #15).

The agent builds an `ApprovalRequest` for a call that its permission mode does not allow unasked and
hands it to the front end's `TurnCallbacks.on_approval` (called from the worker thread; it blocks
until the user answers). A front end that cannot ask (print mode) answers `ApprovalDecision("no")`.
The agent serialises requests, so a front end sees one at a time even from parallel subagents.
These are plain data so that the UI never imports the agent.
"""

from __future__ import annotations

from typing import Literal

from evo_agent.session import plain_dataclass as dataclass

__all__ = ["ApprovalRequest", "ApprovalDecision", "Answer"]

Answer = Literal["yes", "no", "always-session", "always-project"]


@dataclass(frozen=True)
class ApprovalRequest:
    tool: str            # the tool's name: "bash", "edit_file", ...
    summary: str         # one line saying exactly what will happen: "run: npm test", "edit src/app.py"
    detail: str = ""     # the full command, or a unified diff for an edit ("" when summary says it all)
    agent: str = ""      # "" for the main agent; the subagent's name when a subagent asks
    rule: str = ""       # the rule "always in this project" would write, e.g. "Bash(npm test)", "Edit(src/**)"
    reason: str = ""     # why it needs approval: "outside the project", "may write files", ...


@dataclass(frozen=True)
class ApprovalDecision:
    answer: Answer
    message: str = ""    # with "no": the user's optional reason, passed on to the model
