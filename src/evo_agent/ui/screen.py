"""The Screen: what a slash command may do to a front end, the one interface the app and the REPL implement.

Every slash command is written once, in ui/commands.py, against this Protocol (as aider writes each
`cmd_*` against its small `InputOutput`); the app (ui/app_screen.py) and the line REPL (cli/repl.py)
each implement it their own way: the app prints into its scrollback and asks with its menu, the
REPL prints lines and reads them.

Threads: `run_work` may run its work off the front end's thread (the app does, so that the screen keeps
drawing); everything here may then be called from that work, and `ask_yes_no` blocks it until the
user answers. Texts are plain and untrusted: the screen makes them safe to print (safe_text).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

__all__ = ["Screen"]


class Screen(Protocol):
    """A front end as a slash command sees it."""

    keys_help: str   # the front end's own paragraph at the end of /help (its keys)

    def notice(self, text: str) -> None:
        """Show `text` (one line or a block: a table, a list, a plan), dim in the app."""

    def notice_command(self, text: str, command: str) -> None:
        """Show `text` (a notice), then `command` indented on a line of its own that only the terminal wraps:
        copied from the screen, it is the one line it is (a line break between its words broke the copy)."""

    def error(self, text: str) -> None:
        """Show a one-line refusal of what was typed (a usage line, a bad number, an unknown command)."""

    def failed(self, text: str) -> None:
        """Show that an operation failed with `text` (an exception's message): `error: …` / `evo-agent: …`."""

    def ask_yes_no(self, question: str) -> bool:
        """Ask `question` (no `[y/N]`: the screen adds its own); Esc, Ctrl+C and the end of input mean no."""

    def ask_line(self, question: str) -> str | None:
        """Read one typed answer to `question` ("" for none); None when this screen reads no free text
        (the app: a command shows its choices and the user types the command again with one)."""

    def show_history(self, messages: Sequence[dict[str, Any]]) -> None:
        """Print a restored conversation (after a rewind), as the resumed session's screen shows it."""

    def run_work(self, label: str, work: Callable[[threading.Event], None], *, interruptible: bool,
            failure: str = "") -> None:
        """Run `work(cancel)`, which may wait on the model or the user: the app in a worker thread with
        `label` in its status line, the REPL at once. `interruptible`: Esc/Ctrl+C set `cancel`. An exception
        is shown as one line (`failure: message`), never a traceback."""

    def edit_prompt(self, text: str) -> None:
        """Offer `text` to be edited and sent again (after /rewind: the prompt gone back before, as Claude Code
        and Codex put it back in their input box): the app in its prompt box, when that is empty; the REPL,
        whose input() takes no text to edit, does nothing."""

    def send_prompt(self, prompt: str, *, shown: str) -> None:
        """Run `prompt` as an ordinary model turn; the scrollback shows `shown` as what was typed."""

    def resume(self, session: str) -> None:
        """The front end's resume path for `session` (an id, prefix or name); "" lets the user pick one."""

    def exit(self, code: int) -> None:
        """Leave the session with exit code `code` (the exit hint follows, as on every way out)."""
