"""What a front end is asked when a tool call needs the user's approval (SPEC §9, issue #15).

The agent builds an `ApprovalRequest` for a call that its permission mode does not allow unasked and
hands it to the front end's `TurnCallbacks.on_approval` (called from the worker thread; it blocks
until the user answers). A front end that cannot ask (print mode) answers `ApprovalDecision("no")`.
The agent serialises requests, so a front end sees one at a time even from parallel subagents.
These are plain data so that the UI never imports the agent.
"""

from __future__ import annotations

from evo_agent.session import plain_dataclass as dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)

__all__ = ["ApprovalRequest", "ApprovalDecision", "Answer", "REFUSED"]

# How a refused call's result begins (agent/permissions.py writes it; the app shows such a result as "not run").
REFUSED = "Not run: the user refused this call."

if TYPE_CHECKING:
    from typing import Literal

    Answer = Literal["yes", "no", "always-session", "always-project"]
_ANSWERS = ("yes", "no", "always-session", "always-project")  # Answer's values (module __getattr__ below)


def __getattr__(name: str) -> object:
    """`Answer` at run time, made when first asked for: typing (~12 M instructions) is not loaded before
    `-p`'s first request (issue #30), and only the type checker reads it."""
    if name == "Answer":
        from typing import Literal

        return Literal[_ANSWERS]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
