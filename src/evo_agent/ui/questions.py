"""The app's questions: an approval or a yes/no, answered on purpose from a small menu (SPEC §9).

A worker thread asks (`ask_approval`, `ask_yes_no`) and blocks until the user answers in the app's event loop; Esc,
Ctrl+C and leaving mean no; Ctrl+C at an approval also stops the turn (ui/keys.py). The menu is moved with ↑/↓ and
confirmed with Enter (↑ with nothing chosen is the prompt's history key: the keyboard goes there). Text typed
meanwhile goes into the prompt box and stays there; Enter there answers nothing (Tab goes back to the question).
Single-key shortcuts (y, n, a, p) work only once the menu has been moved and the prompt box is empty; y, a and p
choose their row, Enter answers. A command or diff longer than the screen shows its first lines and how many more
there are; Ctrl+O prints it whole, and "yes" waits until it has been. The keys that drive this are in ui/keys.py;
the app draws `menu_text` above its prompt.
"""

from __future__ import annotations

import concurrent.futures
from typing import TYPE_CHECKING

from prompt_toolkit.formatted_text import FormattedText
from rich.console import RenderableType
from rich.text import Text

from evo_agent.safe_text import terminal_safe
from evo_agent.session import one_line
from evo_agent.tools import facts_of
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest

from . import render

if TYPE_CHECKING:
    from .app import AgentApp

__all__ = ["Questions", "YES_ANSWERS"]

YES_ANSWERS = ("yes", "always-session", "always-project")
_SHORTCUTS = {"y": "yes", "n": "no", "a": "always-session", "p": "always-project"}


class Questions:
    """The question that is up (at most one), its menu, and where the keyboard is."""

    def __init__(self, app: AgentApp) -> None:
        self._app = app
        self.approval: tuple[ApprovalRequest, concurrent.futures.Future] | None = None
        self.question: concurrent.futures.Future | None = None   # a y/n question from a worker (ask_yes_no)
        self.reason_mode = False     # "No, and tell the model why": the prompt box takes the reason
        self._stashed_text = ""      # what the prompt box held before the reason
        # The menu of the question that is up: (answer, label) rows, the chosen row (None until ↑/↓),
        # whether typing moved the focus to the prompt box, and how many detail lines are not shown yet.
        self.menu: list[tuple[str, str]] = []
        self.choice: int | None = None
        self.on_prompt = False
        self.unseen = 0
        self.full_detail: tuple[str, str] | None = None   # (tool, detail) of the question, for Ctrl+O

    def asking(self) -> bool:
        return self.approval is not None or self.question is not None

    # ------------------------------------------------------------------ asked from a worker thread
    def ask_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        """Blocks the calling (worker) thread until the user answers (exit and Ctrl+C mean no)."""
        app = self._app
        future: concurrent.futures.Future = concurrent.futures.Future()
        loop = app.loop
        if loop is None or app._exiting:
            return ApprovalDecision("no")
        try:
            loop.call_soon_threadsafe(self._show_approval, request, future)
        except RuntimeError:
            return ApprovalDecision("no")
        while True:
            try:
                return future.result(timeout=0.2)
            except concurrent.futures.TimeoutError:
                if app._exiting or app.cancel.is_set():
                    return ApprovalDecision("no")
            except Exception:  # noqa: BLE001
                return ApprovalDecision("no")

    def ask_yes_no(self, question: str) -> bool:
        """Called from a worker thread: print `question`, block until y or n (Esc, Ctrl+C and exit mean no)."""
        app = self._app
        future: concurrent.futures.Future = concurrent.futures.Future()
        loop = app.loop
        if loop is None or app._exiting:
            return False
        try:
            loop.call_soon_threadsafe(self._show_question, question, future)
        except RuntimeError:
            return False
        while True:
            try:
                return bool(future.result(timeout=0.2))
            except concurrent.futures.TimeoutError:
                if app._exiting:
                    return False
            except Exception:  # noqa: BLE001
                return False

    # ------------------------------------------------------------------ shown in the loop
    def _show_approval(self, request: ApprovalRequest, future: concurrent.futures.Future) -> None:
        app = self._app
        if app._exiting:
            future.set_result(ApprovalDecision("no"))
            return
        app._flush_text()
        head = self._approval_head(request)
        items: list[RenderableType] = [head]
        unseen = 0
        if request.detail:
            from rich.cells import cell_len

            width = self._app.width()
            shown = head.wrapped(width) if isinstance(head, render.Prose) else head
            head_rows = sum(max(1, -(-cell_len(line) // width)) for line in shown.plain.split("\n"))
            body, unseen = render.approval_detail(request.tool, request.detail,
                                                  max(4, self._preview_lines() - (head_rows - 1)), width)
            items.append(body)
        rows = [("yes", "Yes")]
        if request.rule:
            rule = request.rule if len(request.rule) <= 60 and "\n" not in request.rule else (
                "this exact command" if facts_of(request.tool).approval == "bash" else "exactly this")
            rows += [("always-session", f"Yes, and allow {rule} for this session"),
                     ("always-project", f"Yes, and always allow {rule} in this project")]
        rows += [("no", "No"), ("no-reason", "No, and tell the model why")]
        self._open_menu([(answer, terminal_safe(label, keep_newlines=False)) for answer, label in rows], unseen,
                        (request.tool, request.detail) if request.detail else None)
        self.approval = (request, future)
        # Printed with the menu up, so the redraw after it draws the menu on the lines the print cleared. Drawn
        # later, over the idle frame's full-width rules, its short rows kept the rules' width in tmux: narrowed,
        # they took two rows each, and the erase before the redraw left the menu's first row behind, doubled.
        app.emit(*items)

    def _approval_head(self, request: ApprovalRequest) -> Text:
        """`? run: npm test  (why it asks)`: one line, as the REPL shows it (a subagent's name, the model's words,
        or a path with newlines drew lines of its own above the command, looking like its note).

        When the command follows, numbered and whole, the summary (its start) is cut to one screen row (the reason
        then goes on the next): a long command filled three rows with its own first line, and with its first
        lines below, the question's start (`? run:`) scrolled off the top of an 80×24 screen, leaving its tail."""
        who = f"{request.agent}: " if request.agent else ""
        summary = Text(terminal_safe(f"{who}{request.summary}", keep_newlines=False), style="bold")
        reason = Text(terminal_safe(f"  ({request.reason})", keep_newlines=False) if request.reason else "",
                      style="evo.dim")
        width = self._app.width()
        whole_below = bool(request.detail) and facts_of(request.tool).approval == "bash"  # the command, numbered
        if whole_below and 2 + summary.cell_len + reason.cell_len > width:
            summary.truncate(width - 2, overflow="ellipsis")
            if reason.plain:  # the reason under it, on a line of its own
                reason = Text("\n  " + reason.plain.strip(), style="evo.dim")
        if not request.detail and facts_of(request.tool).approval == "bash":
            # the command is shown only here: the terminal wraps it, so it still copies as the one line it is (a
            # line break and an indent inserted between its words made a pasted copy run its first half alone)
            head: Text = Text()
            if reason.plain and 2 + summary.cell_len + reason.cell_len > width:
                # The reason goes under it, wrapped between words: after the command, the terminal cut it
                # mid-word too (`(the c` / `ommand runs 'npm'`).
                note = render.Prose("  " + reason.plain.strip(), style="evo.dim")
                note.hang = 2
                reason = Text("\n") + note.wrapped(width)
        else:
            head = render.Prose()  # wrapped between words, under its start (not `goe` / `s on`)
            head.hang = 2
        head.append("? ", style="evo.warn")
        head.append_text(summary)
        head.append_text(reason)
        return head

    def _preview_lines(self) -> int:
        """Lines of a command or diff shown with its question: what fits above the menu and the prompt."""
        return max(4, self._app._rows() - 14)

    def _show_question(self, question: str, future: concurrent.futures.Future) -> None:
        app = self._app
        if app._exiting:
            future.set_result(False)
            return
        head = render.Prose()  # wrapped between words, under its start
        head.hang = 2
        head.append("? ", style="evo.warn")
        head.append_text(render.safe(question, "bold"))
        self._open_menu([("yes", "Yes"), ("no", "No")])
        self.question = future  # first: the status line drawn with the question names its keys
        app.emit(head)
        app.app.invalidate()

    # ------------------------------------------------------------------ answers
    def answer_approval(self, answer: str, message: str) -> None:
        if self.approval is None:
            return
        app = self._app
        request, future = self.approval
        self.approval = None
        self._close_menu()
        if self.reason_mode:
            self.reason_mode = False
            app.buffer.text = self._stashed_text
            app.buffer.cursor_position = len(app.buffer.text)
        words = {"yes": "allowed", "no": "refused", "always-session": "allowed for this session",
                 "always-project": "allowed in this project" + (f" ({request.rule})" if request.rule else "")}
        line = f"  └  {words.get(answer, answer)}" + (f": {message}" if message else "")
        # The reason for a no, wrapped between words under its start (the terminal went on at column 0, under
        # the └, and cut words); a reason of several lines keeps that indent on each.
        style = "evo.dim" if answer != "no" else "evo.warn"
        said = render.Prose(terminal_safe(line).replace("\n", "\n     "), style=style)
        said.hang = 5
        app.emit(said)
        if not future.done():
            future.set_result(ApprovalDecision(answer, message))  # type: ignore[arg-type]  # answer: one of the menu's Answer values
        app.refit()

    def answer_question(self, yes: bool) -> None:
        future, self.question = self.question, None
        if future is None:
            return
        self._close_menu()
        self._app.emit(render.safe("  └  yes" if yes else "  └  no", "evo.dim"))
        if not future.done():
            future.set_result(yes)
        self._app.refit()

    def say_no(self) -> bool:
        """Esc or Ctrl+C: no to the question that is up; whether one was."""
        if self.question is not None:
            self.answer_question(False)
        elif self.approval is not None:
            self.answer_approval("no", "")
        else:
            return False
        return True

    def drop(self) -> None:
        """Leaving: every pending question is answered no, so no worker waits for ever."""
        if self.approval is not None and not self.approval[1].done():
            self.approval[1].set_result(ApprovalDecision("no"))
        if self.question is not None and not self.question.done():
            self.question.set_result(False)

    # ------------------------------------------------------------------ the menu
    def _open_menu(self, rows: list[tuple[str, str]], unseen: int = 0, detail: tuple[str, str] | None = None) -> None:
        """A question is up: its answers, nothing chosen yet, the keyboard on the question."""
        self.menu, self.choice, self.unseen, self.full_detail = rows, None, unseen, detail
        self.on_prompt = bool(self._app.buffer.text)  # someone mid-sentence keeps typing into the prompt
        self._app._flash_until = 0.0

    def _close_menu(self) -> None:
        self.menu, self.choice, self.on_prompt, self.unseen, self.full_detail = [], None, False, 0, None
        self._app._flash_until = 0.0

    def move(self, step: int) -> None:
        if not self.menu:
            return
        if self.choice is None:
            self.choice = 0 if step > 0 else len(self.menu) - 1
        else:
            self.choice = (self.choice + step) % len(self.menu)
        self._app._flash_until = 0.0
        self._app.app.invalidate()

    def toggle_focus(self) -> None:
        """Tab: the keyboard goes from the question to the prompt box, or back."""
        self.on_prompt = not self.on_prompt
        self._app._flash_until = 0.0
        self._app.app.invalidate()

    def key(self, data: str, pasted: bool) -> None:
        """A key while the keyboard is on the question: a shortcut once the menu was moved and the prompt is
        empty; text goes into the prompt box (and the keyboard with it); anything else does nothing."""
        buffer = self._app.buffer
        if not pasted and len(data) == 1 and self.choice is not None and not buffer.text:
            row = self._shortcut(data.lower())
            if row is not None:
                # y, a and p only choose their row: a menu moved by no deliberate key (a mouse wheel sends ↓ in
                # tmux) then "add a test" typed for the prompt answered "always"; Enter answers. n says no at once.
                self.choice = row
                if self.menu[row][0] in YES_ANSWERS:
                    self._app.app.invalidate()
                else:
                    self.confirm()
                return
        text = data.replace("\r\n", "\n").replace("\r", "\n") if pasted else data
        if text and (pasted or not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text)):
            buffer.insert_text(text)
            self.on_prompt = True
            self._app.app.invalidate()

    def _shortcut(self, key: str) -> int | None:
        wanted = _SHORTCUTS.get(key)
        return next((i for i, (answer, _) in enumerate(self.menu) if answer == wanted), None)

    def confirm(self) -> None:
        """Enter on the menu: the chosen answer, if one is chosen and may be given now."""
        app = self._app
        if self.choice is None:
            app._hint("Choose an answer with ↑/↓, then Enter (Esc says no)")
            return
        answer = self.menu[self.choice][0]
        if answer in YES_ANSWERS and self.unseen:
            many = self.unseen != 1
            app._hint(f"{_lines(self.unseen)} {'are' if many else 'is'} not shown yet: Ctrl+O shows "
                      f"{'them' if many else 'it'}, then yes can be chosen")
            return
        if self.question is not None:
            self.answer_question(answer == "yes")
        elif answer == "no-reason":
            self.reason_mode = True
            self._stashed_text = app.buffer.text
            app.buffer.reset()
            app.app.invalidate()
        else:
            self.answer_approval(answer, "")

    def show_whole_detail(self) -> None:
        """Ctrl+O during a question: the whole command or diff, into the scrollback; then yes may be chosen."""
        assert self.full_detail is not None
        tool, detail = self.full_detail
        body, _ = render.approval_detail(tool, detail)
        lines = detail.rstrip("\n").count("\n") + 1
        self._app.emit(render.safe(f"  whole {'command' if tool == 'bash' else 'text'} ({lines} lines):",
                                   "evo.dim"), body)
        self.unseen = 0
        if "Ctrl+O" in self._app._flash:  # `… not shown yet: Ctrl+O shows them` no longer holds: the keys come back
            self._app._flash = ""
        self._app.app.invalidate()

    # ------------------------------------------------------------------ drawn by the app
    def menu_text(self) -> FormattedText:
        """The answers, one per row; the chosen one reversed. Yes rows are dim while lines are unseen."""
        width = self._app.width() - 4
        parts: list[tuple[str, str]] = []
        for i, (answer, label) in enumerate(self.menu):
            if i:
                parts.append(("", "\n"))
            if answer in YES_ANSWERS and self.unseen:  # the label cut, never the condition (it went at 60 columns)
                text = one_line(label, width - len(" (after Ctrl+O)"))
                parts.append(("class:choice.off", f"{'❯' if i == self.choice else ' '} {text} (after Ctrl+O)"))
                continue
            text = one_line(label, width)
            if i == self.choice:
                parts.append(("class:choice", f"❯ {text}"))
            else:
                parts.append(("", f"  {text}"))
        return FormattedText(parts)

    def status_keys(self, flashing: bool) -> str:
        """The status line while a question is up: the keys that answer it (or the hint flashing)."""
        if self.reason_mode:
            return "Enter sends the reason · Esc says no without one"
        if flashing:
            return self._app._flash
        if self.on_prompt:
            return "Your text stays in the prompt · Tab goes back to the question · Esc says no"
        if self.unseen:  # first: cut last at 80 columns, it read `(155 lines not sho…`, and yes waits for it
            return f"Ctrl+O shows all ({_lines(self.unseen)} not shown) · ↑/↓ choose · Enter answers · Esc says no"
        return "↑/↓ choose · Enter answers · Esc says no"


def _lines(count: int) -> str:
    """`1 line`, `2 lines`: how many lines of a question's detail are not shown (it read `1 lines`)."""
    return f"{count} line{'' if count == 1 else 's'}"
