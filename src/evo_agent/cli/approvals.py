"""The REPL's approval prompt: the worker thread asks, the main thread reads the answer.

A turn runs in a worker thread (see runtime.py), but the terminal belongs to the main thread,
which is also where Ctrl+C arrives. So `on_approval` (called by the agent from the worker)
queues the request and waits; the main thread, between its waits for the turn, shows it and
reads one answer, a whole word (SPEC §9: answered on purpose, never by a stray letter):

    yes      this once                no [REASON]  no (the reason, if any, is passed to the model)
    always   for this session         project      always in this project (a rule in your own config)

Ctrl+C or end of input mean no. The whole command or diff is printed first, every line of it
(numbered), with everything the model chose passed through `terminal_safe`. On a terminal, lines
typed before the question appeared are not taken as its answer: they are set aside, shown, and
read as the next prompts after the turn; an answer line with more text queued behind it was pasted (or
typed ahead without looking) and is set aside with the rest.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable

from evo_agent.safe_text import terminal_safe
from evo_agent.tools import facts_of
from evo_agent.tools.approval import Answer, ApprovalDecision, ApprovalRequest

from .runtime import Console, Signals, Terminated

ANSWERS: dict[str, Answer] = {"yes": "yes", "always": "always-session", "project": "always-project", "no": "no",
                              "n": "no"}


class ReplApprovals:
    def __init__(self, console: Console, signals: Signals, read: Callable[[str], str | None],
                 interactive: bool = True) -> None:
        self.interactive = interactive  # piped input: an answer that is not one is a no, never a re-ask
        self.console = console
        self.signals = signals
        self.read = read
        self._queue: queue.Queue = queue.Queue()
        self.closed = False
        self.set_aside: list[str] = []  # lines typed before a question: the next prompts, never its answer

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
        self._set_aside_typeahead()
        offers_rule = bool(request.rule)
        choices = "yes · no (no REASON tells the model why)"
        if offers_rule:
            rule = terminal_safe(request.rule, keep_newlines=False)
            if len(rule) > 60:  # as the app names it: a padded rule printed whole would push the question away
                rule = "this exact command" if facts_of(request.tool).approval == "bash" else "exactly this"
            choices += f" · always (this session) · project (always in this project) [{rule}]"
        self.console.line(f"  answer with a word: {choices}")
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
            if self._set_aside_typeahead():  # more came with it: a paste, or keys typed ahead without looking
                self.console.line("  (that line came with more text: pasted, not taken as its answer)")
                continue
            word, _, rest = line.strip().partition(" ")
            answer: Answer | None = ANSWERS.get(word.lower())
            if answer is None and word.lower() in ("no,", "nope", "never"):
                answer = "no"
            if answer is not None and answer != "no" and rest.strip():
                answer = None  # "yes please stop" is a sentence, not an answer
            if answer is None or (answer.startswith("always") and not offers_rule):
                if not self.interactive:
                    self.console.line("(no: not an answer)")
                    return ApprovalDecision("no")
                self.console.line("  answer yes, no [reason]" + (", always or project" if offers_rule else ""))
                continue
            return ApprovalDecision(answer, rest.strip() if answer == "no" else "")

    def show(self, request: ApprovalRequest) -> None:
        who = f"[{terminal_safe(request.agent, keep_newlines=False)}] " if request.agent else ""
        head = f"? {who}{request.tool} wants to {terminal_safe(request.summary, keep_newlines=False)}"
        self.console.line(head)
        if request.reason:
            self.console.line(f"  needs approval: {terminal_safe(request.reason, keep_newlines=False)}")
        if request.detail:
            lines = terminal_safe(request.detail).rstrip("\n").split("\n")
            width = len(str(len(lines)))
            shown = [f"  {number:>{width}} │ {line}" for number, line in enumerate(lines, start=1)]
            for line in shown:  # every line: the scrollback holds them all
                self.console.line(line)
            if _rows(shown) > _screen_rows() - 4:  # its head scrolled away: say again what is asked, where it is
                self.console.line(head)

    def _set_aside_typeahead(self) -> bool:
        """On a terminal: what was typed before the question (or came with its answer line) is not its answer.
        Whole lines are kept as the next prompts (and shown); a half-typed line is dropped, since it cannot be
        read back. Whether anything was queued.

        The queue is read in non-canonical mode: in line mode a half line is invisible to `select`, and
        "yes" pasted with "and then" behind it looked like a "yes" typed alone."""
        if not self.interactive:
            return False
        try:
            import termios
        except ImportError:
            return False
        try:
            fd = sys.stdin.fileno()
            if not os.isatty(fd):
                return False
            saved = termios.tcgetattr(fd)
        except (OSError, ValueError, AttributeError, termios.error):
            return False
        from evo_agent.ui.typeahead import waiting_keys

        pending = waiting_keys(fd, saved, flush=True)
        text = pending.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        lines = [line for line in text.split("\n")[:-1] if line.strip()]  # the last piece: a half line, or ""
        for line in lines:
            self.console.line(f"  (typed before this question, not taken as its answer; sent after the turn: "
                              f"{terminal_safe(line, keep_newlines=False)})")
        self.set_aside.extend(lines)
        return bool(pending)




def _screen_rows() -> int:
    import shutil

    return shutil.get_terminal_size().lines


def _rows(lines: list[str]) -> int:
    """The terminal rows `lines` take once wrapped at the terminal's width (one padded line can take hundreds)."""
    import shutil

    from rich.cells import cell_len

    columns = max(shutil.get_terminal_size().columns, 1)
    return sum(max(1, -(-cell_len(line) // columns)) for line in lines)


__all__ = ["ReplApprovals"]
