"""Running turns from a command line: signals, a worker thread, and output that can be muted.

A turn runs in a worker thread while the main thread waits, so a signal is
handled at once whatever the turn is doing (a blocked socket read, a long
`bash`). The rules:

- SIGINT while a turn runs and has not been asked to stop: set its cancel
  event (the turn records what was interrupted and returns);
- SIGINT otherwise (at the prompt, or a second Ctrl+C while cancelling):
  KeyboardInterrupt in the main thread, which means "exit";
- SIGTERM (and SIGHUP): `Terminated` in the main thread, which means "exit" too (143, or 129 for SIGHUP).

On the way out the running turn is cancelled and given a few seconds to
record its interrupted tools, then output is muted so that the exit hint
stays the last line printed.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from evo_agent.agent import Agent, CompactionFailed, TurnCallbacks, TurnResult
from evo_agent.agent.callbacks import EXIT_GRACE_S
from evo_agent.providers import ProviderError
from evo_agent.safe_text import terminal_line, terminal_safe
from evo_agent.session import find_project_dir
from evo_agent.session import plain_dataclass as dataclass

from .errors import EXIT_HANGUP, EXIT_TERMINATED

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from typing import Any, Generic, TextIO, TypeVar

    R = TypeVar("R")
else:  # Outcome[R] is the type checker's: at run time Outcome is a plain class (typing is ~12 M instructions)
    class Generic:
        def __class_getitem__(cls, _: object) -> type:
            return object

    R = None


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: leave like on Ctrl+C (a BaseException so `except Exception` lets it pass).

    `exit_code` is 143 for SIGTERM, 129 for SIGHUP (cli/errors.py), `what` the word for the one-line notice.
    """

    def __init__(self, exit_code: int = EXIT_TERMINATED, what: str = "terminated") -> None:
        super().__init__(what)
        self.exit_code = exit_code
        self.what = what


class Console:
    """stdout/stderr writes behind one lock, with a switch that silences late output."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._lock = threading.RLock()  # re-entrant: the SIGINT handler prints from the main thread
        self.muted = False
        self.at_line_start = True  # of self.out

    def write(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            if self.muted:
                return
            try:
                self.out.write(text)
                self.out.flush()
            except (OSError, ValueError):
                return
            self.at_line_start = text.endswith("\n")

    def line(self, text: str = "") -> None:
        """A whole line on stdout, starting on a fresh line."""
        with self._lock:
            if self.muted:
                return
            try:
                if not self.at_line_start:
                    self.out.write("\n")
                self.out.write(text + "\n")
                self.out.flush()
            except (OSError, ValueError):
                return
            self.at_line_start = True

    def end_line(self) -> None:
        with self._lock:
            if self.muted or self.at_line_start:
                return
            try:
                self.out.write("\n")
                self.out.flush()
            except (OSError, ValueError):
                return
            self.at_line_start = True

    def err_line(self, text: str) -> None:
        """A line on stderr, made terminal-safe whatever it quotes (an API's error message is the server's text)."""
        text = terminal_safe(text)
        with self._lock:
            if self.muted:
                return
            try:
                if self.out is not self.err and not self.at_line_start and _same_terminal(self.out, self.err):
                    self.out.write("\n")
                    self.out.flush()
                    self.at_line_start = True
                self.err.write(text + "\n")
                self.err.flush()
            except (OSError, ValueError):
                pass

    def error(self, text: str) -> None:
        self.err_line(text if text.startswith("evo-agent: ") else f"evo-agent: {text}")

    def final(self, text: str, *, to_stderr: bool) -> None:
        """The last line of the process: printed even when muted, and then nothing else."""
        with self._lock:
            self.muted = True
            stream = self.err if to_stderr else self.out
            try:
                if not to_stderr and not self.at_line_start:
                    stream.write("\n")
                stream.write(text + "\n")
                stream.flush()
                if stream is not self.out:
                    self.out.flush()
            except (OSError, ValueError):
                pass


def _same_terminal(a: TextIO, b: TextIO) -> bool:
    try:
        return a.isatty() and b.isatty()
    except (OSError, ValueError, AttributeError):
        return False


class Signals:
    """SIGINT/SIGTERM handling for the main thread (see the module docstring)."""

    def __init__(self, console: Console | None = None) -> None:
        self.turn_cancel: threading.Event | None = None
        self.exiting = False
        self.asking = False  # a question is on screen in the main thread: Ctrl+C answers it ("no")
        self.console = console

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        # signal's C half: `signal` itself only adds enums (3 M instructions before `-p`'s first request, issue #30)
        import _signal  # type: ignore[import-not-found]  # no stubs: signal.signal, signal.SIG* are these

        pairs = [(_signal.SIGINT, self._on_sigint), (_signal.SIGTERM, self._on_sigterm)]
        if hasattr(_signal, "SIGHUP"):  # the terminal went away: leave like on SIGTERM, exit 129
            pairs.append((_signal.SIGHUP, self._on_sighup))
        for signum, handler in pairs:  # for the rest of the process: nothing puts the old ones back
            try:
                _signal.signal(signum, handler)
            except (ValueError, OSError):
                pass

    def _on_sigint(self, signum: int, frame: Any) -> None:
        if self.exiting:
            return
        cancel = self.turn_cancel
        if cancel is not None and not cancel.is_set() and not self.asking:
            cancel.set()
            if self.console is not None:
                self.console.err_line("evo-agent: interrupting… (Ctrl+C again to exit)")
            return
        raise KeyboardInterrupt

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        if self.exiting:
            return
        raise Terminated(EXIT_TERMINATED, "terminated")

    def _on_sighup(self, signum: int, frame: Any) -> None:
        if self.exiting:
            return
        raise Terminated(EXIT_HANGUP, "hangup: the terminal went away")


@dataclass
class Outcome(Generic[R]):
    result: R | None = None  # a TurnResult for a turn, a CompactResult for /compact
    error: ProviderError | CompactionFailed | None = None
    crash: BaseException | None = None


_running: set[threading.Event] = set()  # "done" events of turns whose thread has not finished


def run_turn(agent: Agent, prompt: str, callbacks: TurnCallbacks, signals: Signals,
             service: Callable[[], None] | None = None) -> Outcome[TurnResult]:
    """Run one turn in a worker thread; KeyboardInterrupt/Terminated propagate (meaning: exit).

    `service` runs in the main thread while it waits (the REPL answers approval requests there).
    """
    return run_interruptible(lambda cancel: agent.run_turn(prompt, callbacks, cancel), signals, service)


def run_interruptible(work_fn: Callable[[threading.Event], R], signals: Signals,
                      service: Callable[[], None] | None = None) -> Outcome[R]:
    """Run `work_fn(cancel)` (a turn, a /compact) in a worker thread while the main thread stays ready for signals.

    Ctrl+C sets `cancel` (Signals); an exit (a second Ctrl+C, SIGTERM) cancels the work, waits up to
    EXIT_GRACE_S for it to record what it was doing, and propagates.

    The main thread waits on an Event, not on Thread.join: a signal handler that
    raises inside join() makes CPython 3.11 believe the thread has ended.
    """
    cancel = threading.Event()
    done = threading.Event()
    outcome: Outcome[R] = Outcome()

    def work() -> None:
        try:
            outcome.result = work_fn(cancel)
        except (ProviderError, CompactionFailed) as exc:
            outcome.error = exc
        except BaseException as exc:  # noqa: BLE001 - reported by the caller as one line
            outcome.crash = exc
        finally:
            done.set()
            _running.discard(done)

    thread = threading.Thread(target=work, name="evo-agent-turn", daemon=True)
    signals.turn_cancel = cancel
    _running.add(done)
    try:
        # start() is inside: on a busy machine the worker can be streaming its request before
        # start() has returned here, and a signal then raises from inside start().
        thread.start()
        while not done.wait(0.05):
            if service is not None:
                service()
    except BaseException:
        # Leaving: let the turn record what it was doing (bash kills its group) before we go.
        signals.exiting = True
        cancel.set()
        if thread.is_alive():  # a signal inside start() may come before the thread exists
            done.wait(EXIT_GRACE_S)
        else:
            _running.discard(done)
        raise
    finally:
        signals.turn_cancel = None
    return outcome


def crash_line(exc: BaseException) -> str:
    return f"evo-agent: internal error: {type(exc).__name__}: {' '.join(str(exc).split())}"


def resume_command(session_id: str, project_dir: Path | str) -> str:
    """`evo-agent --resume ID`, with `--project-dir DIR` when the current directory would not find the session."""
    command = f"evo-agent --resume {session_id}"
    project = Path(project_dir).absolute()
    try:
        found = find_project_dir(Path.cwd())
    except OSError:  # the current directory was deleted under us
        found = None
    if found is None or os.path.realpath(found) != os.path.realpath(project):
        import shlex  # here: only the exit hint of a session started elsewhere needs it

        # One terminal-safe line: a directory's name is whoever made it's text (an unpacked archive's).
        command += f" --project-dir {terminal_line(shlex.quote(str(project)))}"
    return command


def exit_hint(agent: Agent) -> str | None:
    """The last line of every way out, naming the session that holds the conversation (`Agent.holder_session_id`);
    None when there is none (nothing was said, so nothing was saved)."""
    session_id = agent.holder_session_id()
    if session_id is None:
        return None
    return f"Resume this session with: {resume_command(session_id, agent.project_dir)}"


def finish(agent: Agent, console: Console, *, to_stderr: bool) -> None:
    """Save what is pending and print the exit hint as the very last line (none when no session was saved)."""
    try:
        agent.recorder.checkpoint()
    except Exception:  # noqa: BLE001
        pass
    hint = exit_hint(agent)
    if hint is not None:
        console.final(hint, to_stderr=to_stderr)


def hard_exit_if_stuck(code: int) -> None:
    """Leave now if a thread would keep the process alive after everything was saved and said.

    That is a turn still running after the grace period, or a thread a
    library left behind — e.g. a UI library's input thread, which can spin on a
    terminal that went away (SIGHUP) and would keep the process alive forever.
    Every record is already on disk (appends are synchronous) and the exit
    hint printed, so nothing is lost by not waiting.
    """
    lingering = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    if _running or lingering:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        finally:
            os._exit(code)
