"""The app's keys: small groups of bindings, each made by a function, merged into one (as prompt_toolkit
composes its own from key_binding/bindings/*.py).

    Enter sends · Alt+Enter, Ctrl+J or \\ then Enter new line · Tab completes a slash command · Ctrl+D on an empty
    prompt quits
    Ctrl+R searches the prompt history (prompt_toolkit's own search keys while it is up)
    Esc or Ctrl+C interrupt the running turn (or say no to a question) · Ctrl+C twice quits (130)
    Ctrl+T shows or hides the Session Plan · Ctrl+O prints the last tool call (or the question's detail) whole
    Ctrl+Z suspends the app to the shell (`fg` brings it back)
    ↑/↓, Enter, Tab and the shortcuts answer a question (ui/questions.py)

prompt_toolkit runs the most specific binding whose filter holds (a named key before `<any>`), so the
groups can be merged in any order; their filters keep the prompt's keys and the question's apart.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from prompt_toolkit.filters import Condition, is_searching
from prompt_toolkit.key_binding import (
    ConditionalKeyBindings,
    KeyBindings,
    KeyBindingsBase,
    KeyPressEvent,
    merge_key_bindings,
)
from prompt_toolkit.keys import Keys

from evo_agent.exit_codes import DOUBLE_CTRL_C_SECONDS, EXIT_INTERRUPTED

from . import render
from .commands import complete as complete_command
from .signals import suspend_to_shell

if TYPE_CHECKING:
    from .app import AgentApp

__all__ = ["app_key_bindings", "KEYS_HELP", "DOUBLE_CTRL_C_SECONDS"]

KEYS_HELP = """\
Keys:
  Enter sends · Alt+Enter, Ctrl+J or \\ then Enter new line · Tab completes
  ↑/↓ history · Ctrl+R searches it (Enter takes the match, Ctrl+G gives up)
  / lists the commands: ↓/↑ choose one, Enter runs it, Tab writes it
  Esc or Ctrl+C interrupts the running turn · Ctrl+C twice quits
  Ctrl+D on an empty prompt quits · Ctrl+T shows or hides the Session Plan
  Ctrl+O shows the last tool call and its output in full
  Ctrl+Z suspends evo-agent to the shell (fg brings it back)
  A prompt sent while the agent works is queued and sent after the turn
  A question: ↑/↓ choose, Enter answers, Esc says no; typing goes to the
  prompt (Tab back to the question); Ctrl+O shows a long command or diff
  whole (yes waits until it has been shown)"""



def app_key_bindings(app: AgentApp) -> KeyBindingsBase:
    """Every key of the app; while Ctrl+R searches the history, prompt_toolkit's own search keys (its Enter, Esc,
    ↑/↓, Ctrl+C and Ctrl+G), which the app's would shadow."""
    return ConditionalKeyBindings(merge_key_bindings([prompt_bindings(app), question_bindings(app),
                                                      interrupt_bindings(app), view_bindings(app), job_bindings(app)]),
                                  ~is_searching)


def _asking(app: AgentApp) -> Condition:
    """A question is up (and the prompt box is not taking the reason for a no)."""
    return Condition(lambda: app.questions.asking() and not app.questions.reason_mode)


def prompt_bindings(app: AgentApp) -> KeyBindings:
    """Writing and sending a prompt: Enter, new lines, Tab completion, Ctrl+D."""
    kb = KeyBindings()
    asking = _asking(app)

    @kb.add("enter", filter=~asking)
    def _(event: KeyPressEvent) -> None:
        if app.questions.reason_mode:
            app.questions.answer_approval("no", app.buffer.text.strip())
            return
        if app.command_choice is not None:
            take_command(app, run=True)
            return
        if app.buffer.text == "/":  # the menu is up and nothing is chosen: `/` alone went to the model
            app._hint("Choose a command with ↓, or type its name")
            return
        if app.buffer.document.text_before_cursor.endswith("\\"):  # Claude Code's quick new line: `\` Enter
            app.buffer.delete_before_cursor()
            app.buffer.insert_text("\n")
            return
        app.submit(app.buffer.text)

    menu_up = ~asking & Condition(lambda: bool(app.command_matches()))

    @kb.add("down", filter=menu_up)
    def _(event: KeyPressEvent) -> None:
        # The `/` menu's rows, as Claude Code's and Codex's: ↓ chose nothing, and Enter sent `/` to the model.
        last = len(app.command_matches()) - 1
        app.command_choice = 0 if app.command_choice is None else min(app.command_choice + 1, last)

    @kb.add("up", filter=menu_up & Condition(lambda: app.command_choice is not None))
    def _(event: KeyPressEvent) -> None:
        app.command_choice = app.command_choice - 1 if app.command_choice else None  # from the top: typing again

    @kb.add("escape", "enter")
    @kb.add("c-j")
    def _(event: KeyPressEvent) -> None:
        app.buffer.insert_text("\n")

    @kb.add("c-d")
    def _(event: KeyPressEvent) -> None:
        if app.questions.asking():
            return
        if not app.buffer.text:
            app.leave(0)
        else:
            app.buffer.delete()

    @kb.add("tab", filter=~asking)
    def _(event: KeyPressEvent) -> None:
        if app.command_choice is not None:
            take_command(app, run=False)
            return
        complete(app)

    return kb


def take_command(app: AgentApp, *, run: bool) -> None:
    """The `/` menu's chosen row: Tab writes it into the prompt; Enter runs it, unless it needs an argument
    (`/rename NAME`), which is then typed after it."""
    matches = app.command_matches()
    choice = app.command_choice
    app.command_choice = None
    if choice is None or choice >= len(matches):
        return
    chosen = matches[choice]
    if run and (not chosen.args or chosen.args.startswith("[")):
        app.buffer.text = chosen.name  # what the history keeps (↑ brings back `/rewind`, not the `/re` typed)
        app.submit(app.buffer.text)
        return
    app.buffer.text = chosen.name + " "
    app.buffer.cursor_position = len(app.buffer.text)


def complete(app: AgentApp) -> None:
    """Tab: a slash command completed, or as far as the commands it could become agree."""
    buffer = app.buffer
    matches = complete_command(buffer.text)
    if len(matches) == 1:
        buffer.text = matches[0].name + " "
        buffer.cursor_position = len(buffer.text)
    elif matches:
        common = os.path.commonprefix([m.name for m in matches])  # noqa: RUF071 — names, not paths
        if len(common) > len(buffer.text):
            buffer.text = common
            buffer.cursor_position = len(common)


def question_bindings(app: AgentApp) -> KeyBindings:
    """Answering a question from its menu (ui/questions.py); typing goes to the prompt box."""
    kb = KeyBindings()
    questions = app.questions
    asking = _asking(app)
    on_question = asking & Condition(lambda: not questions.on_prompt)

    @kb.add("enter", filter=asking)
    def _(event: KeyPressEvent) -> None:
        if questions.on_prompt:  # typed for the prompt: it answers nothing, and no newline goes in
            app._hint("Answer the question first: Tab goes to it (your text stays in the prompt)")
            return
        questions.confirm()

    @kb.add("tab", filter=asking)
    @kb.add("s-tab", filter=asking)
    def _(event: KeyPressEvent) -> None:
        questions.toggle_focus()

    @kb.add("up", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        if questions.choice is None:
            # Nothing chosen yet: ↑ is the prompt's history key, typed for the prompt (↑↑↑ Enter resent an
            # earlier prompt, and answered "always allow … in this project"). The keyboard goes to the prompt.
            questions.toggle_focus()
            app.buffer.auto_up(count=event.arg)
            return
        questions.move(-1)

    @kb.add("down", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        questions.move(1)

    @kb.add("c-r", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        # Not the history search: its keys would take Enter and ↑/↓ from the question shown above.
        app._hint("Answer the question first (Ctrl+R searches from the prompt: Tab)")

    @kb.add("<any>", filter=on_question)
    def _(event: KeyPressEvent) -> None:
        questions.key(event.data or "", event.key_sequence[0].key == Keys.BracketedPaste)

    @kb.add(Keys.BracketedPaste, filter=on_question)
    def _(event: KeyPressEvent) -> None:
        questions.key(event.data or "", True)

    return kb


def interrupt_bindings(app: AgentApp) -> KeyBindings:
    """Esc: no to a question, else close the `/` menu, else stop the running turn; Ctrl+C: no to a question, and
    at an approval it stops the turn too; Ctrl+C twice leaves."""
    kb = KeyBindings()

    @kb.add("escape")
    def _(event: KeyPressEvent) -> None:
        if app.questions.say_no():
            return
        if app.command_matches():  # the `/` menu closes first, the text kept (as Claude Code's and Codex's)
            app.menu_closed, app.command_choice = True, None
            app.refit()
        elif app.running:
            app.interrupt()

    @kb.add("c-c")
    @kb.add("<sigint>")  # `kill -INT` from outside (the terminal's Ctrl+C is a key here): what Ctrl+C does
    def _(event: KeyPressEvent) -> None:
        ctrl_c(app)

    return kb


def ctrl_c(app: AgentApp) -> None:
    """Ctrl+C: no to an approval, and the turn stopped; no to a yes/no question; during a turn, interrupt it
    (a second while it stops leaves, as in the REPL);
    at the idle prompt, clear it and arm, and a second within DOUBLE_CTRL_C_SECONDS leaves with 130.

    Interrupting does not arm: a user who stops a turn and then presses Ctrl+C at the prompt to clear it
    is not thrown out (cli/repl.py does the same)."""
    now = time.monotonic()
    if app.questions.approval is not None and app.running and not app.cancel.is_set():
        # Stop the turn, as Codex's Ctrl+C does: the turn is cancelled first, so the worker that gets the no
        # finds it cancelled and runs nothing more (Esc, only "no", lets the model go on).
        app._last_ctrl_c = 0.0
        app.interrupt()
        app.questions.say_no()
        return
    if app.questions.say_no():
        return
    if app.running:
        if app.cancel.is_set():  # still stopping: the second Ctrl+C means "leave now"
            app.leave(EXIT_INTERRUPTED)
            return
        app._last_ctrl_c = 0.0
        app.interrupt()
        return
    if now - app._last_ctrl_c < DOUBLE_CTRL_C_SECONDS:
        app.leave(EXIT_INTERRUPTED)
        return
    app._last_ctrl_c = now
    if app.buffer.text:
        app.buffer.reset()
    app._flash, app._flash_until = "Press Ctrl+C again to exit", now + DOUBLE_CTRL_C_SECONDS
    app._schedule_redraw(DOUBLE_CTRL_C_SECONDS + 0.05)


def view_bindings(app: AgentApp) -> KeyBindings:
    """Ctrl+T: the Session Plan above the prompt; Ctrl+O: the last tool call, or the question's detail, whole."""
    kb = KeyBindings()

    @kb.add("c-t")
    def _(event: KeyPressEvent) -> None:
        app._show_plan = not app._show_plan
        app._plan_cache = (-1.0, "")
        app.refit()

    @kb.add("c-o")
    def _(event: KeyPressEvent) -> None:
        if app.questions.asking() and app.questions.full_detail is not None:
            app.questions.show_whole_detail()
        elif app._last_tool is not None:
            name, tool_input, output = app._last_tool
            app.emit(render.tool_call_full(name, tool_input), render.tool_output_full(output))

    return kb


def job_bindings(app: AgentApp) -> KeyBindings:
    """Ctrl+Z: the app stops as any terminal program does, and the shell's `fg` brings it back, redrawn with what
    was typed (prompt_toolkit's default put a literal ^Z into the prompt, which Enter then sent to the model).

    Where the shell has no job control (`sh -c`, a plain tmux window) the kernel drops the stop and the app
    just redraws; a turn running meanwhile waits stopped with the rest of the process."""
    kb = KeyBindings()

    @kb.add("c-z")
    def _(event: KeyPressEvent) -> None:
        suspend_to_shell(event.app)

    return kb
