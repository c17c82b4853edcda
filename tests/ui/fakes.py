"""A scripted stand-in for the agent: every member of `evo_agent.ui.bridge.AgentLike`, and nothing the app may not use."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from evo_agent.agent.events import TextDelta, TurnEvent
from evo_agent.agent.instructions import Instructions
from evo_agent.agent.resuming import Confirm, Resumed
from evo_agent.agent.usage import Usage
from evo_agent.tools.approval import ApprovalRequest


class FakeAgent:
    """Each turn replays `script`: each step an event for `on_event`, or an ApprovalRequest for `on_approval`.

    `block=True` makes a turn wait on its cancel event after the script
    (so a test can press Ctrl+C while it runs); `started` is set once the
    turn is inside `run_turn`.
    """

    def __init__(self, project_dir: Path, script: list[TurnEvent | ApprovalRequest] | None = None, *,
                 block: bool = False, gate: threading.Event | None = None):
        self.project_dir = Path(project_dir)
        self.session_id = "1780000000000_aaaaaaaa"
        self.name: str | None = None
        self.model = "fake-model"
        self.provider = SimpleNamespace(name="fake")
        self.total_tokens = 1234
        self.usage = Usage()
        self.context_chars = 5000
        self.compact_threshold = 50000
        self.store = None
        self.recorder = SimpleNamespace(path=None)  # no transcript: /rewind has nothing to list
        self.instructions = Instructions()
        self.permission_mode = "ask"
        self.read_only_backstop: bool | None = None
        self.sandbox = None
        self.messages: list[dict[str, Any]] = []
        self.script = script or [TextDelta("Hello "), TextDelta("**world**")]
        self.block = block
        self.gate = gate  # when given, a turn waits for it (or for its cancel event) after the script
        self.decisions: list = []  # what on_approval answered, for ApprovalRequest steps
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.turns: list[str] = []
        self.resumed: list[str] = []
        self.compacted: list[str | None] = []
        self.cleared = 0

    def run_turn(self, prompt, callbacks, cancel) -> None:
        self.turns.append(prompt)
        self.messages.append({"role": "user", "content": prompt})
        self.started.set()
        for step in self.script:
            if isinstance(step, ApprovalRequest):
                self.decisions.append(callbacks.on_approval(step))
            else:
                callbacks.on_event(step)
        if self.gate is not None:
            while not (self.gate.wait(0.02) or cancel.is_set()):
                pass
        if self.block and cancel.wait(10):
            self.cancelled.set()
            return
        self.total_tokens += 100

    def resume(self, session_id: str, *, confirm: Confirm | None = None) -> Resumed:
        if not session_id.startswith("17"):
            raise ValueError(f"invalid session id {session_id!r}")
        self.resumed.append(session_id)
        self.session_id = "1780000099999_bbbbbbbb"
        self.messages = [
            {"role": "user", "content": "restored question"},
            {"role": "assistant", "content": [
                {"type": "text", "text": "restored answer"},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]},
        ]
        return Resumed(session_id, self.session_id, len(self.messages), list(self.messages))

    def clear(self) -> None:
        self.cleared += 1
        self.session_id = "1780000088888_cccccccc"
        self.messages = []

    def compact(self, focus, cancel=None) -> None:
        self.compacted.append(focus)

    def cost_text(self) -> str:
        return f"tokens: {self.total_tokens:,}"

    def mcp_text(self) -> str:
        return "MCP servers:\n  docs (user, stdio) — failed: it exited"

    def mcp_reconnect(self, name: str) -> str:
        self.reconnected = [*getattr(self, "reconnected", []), name]
        return f"MCP server {name}: connected"

    def rewind(self, turn: int) -> None:
        raise ValueError("the fake keeps no transcript to rewind")

    def holder_session_id(self) -> str | None:
        return self.session_id if self.turns else None

    def rename(self, name: str) -> str:
        if not name.strip():
            raise ValueError("a session name cannot be empty")
        self.name = name.strip()
        return self.name

    def permissions_text(self) -> str:
        return f"permissions: mode {self.permission_mode}"

    def plan_text(self, *, compact: bool = False) -> str:
        return "No Session Plan."

    def plan_progress(self) -> tuple[int, int] | None:
        return None

    def memory_text(self, name: str = "") -> str:
        return "No Auto Memory."

    def remember(self, text: str, *, scope: str = "project") -> str:
        raise RuntimeError("the fake has no Auto Memory")
