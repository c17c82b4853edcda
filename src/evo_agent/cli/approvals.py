"""The REPL's approval prompt: the worker thread asks, the main thread reads the answer.

A turn runs in a worker thread (see runtime.py), but the terminal belongs to the main thread,
which is also where Ctrl+C arrives. So `on_approval` (called by the agent from the worker)
queues the request and waits; the main thread, between its waits for the turn, shows it and
reads one answer:

    y  yes, this once          n [REASON]  no (the reason, if any, is passed to the model)
    a  always in this session  p           always in this project (a rule in your own config: evo-agent trust --status)

Ctrl+C or end of input mean no. Text from the model is passed through `terminal_safe`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from evo_agent.safe_text import terminal_safe
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from .runtime import Console, Signals, Terminated

MAX_DETAIL_LINES = 60
ANSWERS = {"y": "yes", "yes": "yes", "a": "always-session", "always": "always-session", "p": "always-project",
           "n": "no", "no": "no"}


class ReplApprovals:
    def __init__(self, console: Console, signals: Signals, read: Callable[[str], str | None],
                 interactive: bool = True) -> None:
        self.interactive = interactive  # piped input: an answer that is not one is a no, never a re-ask
        self.console = console
        self.signals = signals
        self.read = read
        self._queue: queue.Queue = queue.Queue()
        self.closed = False

    # ---- worker thread
    def on_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        if self.closed:
            return ApprovalDecision("no")
        slot: list[ApprovalDecision] = []
        answered = threading.Event()
        self._queue.put((request, slot, answered))
        while not answered.wait(0.1):
            if self.closed:
                return ApprovalDecision("no")
        return slot[0] if slot else ApprovalDecision("no")

    # ---- main thread
    def service(self) -> None:
        """Answer every queued request (called by the main thread while a turn runs)."""
        while True:
            try:
                request, slot, answered = self._queue.get_nowait()
            except queue.Empty:
                return
            try:
                slot.append(self.ask(request))
            except Terminated:
                self.closed = True
                raise
            finally:
                answered.set()

    def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        self.show(request)
        offers_rule = bool(request.rule)
        choices = "y yes · n no (n REASON tells the model why)"
        if offers_rule:
            rule = terminal_safe(request.rule, keep_newlines=False)
            choices += f" · a always this session · p always in this project [{rule}]"
        self.console.line(f"  {choices}")
        while True:
            self.signals.asking = True
            try:
                line = self.read("Allow? ")
            except KeyboardInterrupt:
                self.console.line("(no)")
                return ApprovalDecision("no")
            finally:
                self.signals.asking = False
            if line is None:
                return ApprovalDecision("no")
            word, _, rest = line.strip().partition(" ")
            answer = ANSWERS.get(word.lower())
            if answer is None and word.lower().startswith("n") and not rest:  # "no," "nope"
                answer = "no"
            if answer is None or (answer.startswith("always") and not offers_rule):
                if not self.interactive:
                    self.console.line("(no: not an answer)")
                    return ApprovalDecision("no")
                self.console.line("  answer y, n [reason]" + (", a or p" if offers_rule else ""))
                continue
            return ApprovalDecision(answer, rest.strip() if answer == "no" else "")

    def show(self, request: ApprovalRequest) -> None:
        who = f"[{terminal_safe(request.agent, keep_newlines=False)}] " if request.agent else ""
        self.console.line(f"? {who}{request.tool} wants to {terminal_safe(request.summary, keep_newlines=False)}")
        if request.reason:
            self.console.line(f"  needs approval: {terminal_safe(request.reason, keep_newlines=False)}")
        if request.detail:
            lines = terminal_safe(request.detail).splitlines()
            for line in lines[:MAX_DETAIL_LINES]:
                self.console.line(f"  │ {line}")
            if len(lines) > MAX_DETAIL_LINES:
                self.console.line(f"  │ [... {len(lines) - MAX_DETAIL_LINES} more lines ...]")


__all__ = ["ReplApprovals"]
