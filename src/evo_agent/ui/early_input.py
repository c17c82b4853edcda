"""Keys typed while the app starts: shown at once, then handed to the app (issue #30: a key within 250 ms).

Importing prompt_toolkit, asyncio and Rich takes a quarter of a second before the app can draw its
first frame. `start()` runs before any of that (stdlib only): it puts the terminal in the app's
input mode (no echo, no line editing, and no signals: Ctrl+C is a key, as in the app), draws the
prompt line (`› `) and reads keys in a thread, echoing the printable ones. `take()`, called by the
app just before its first frame, stops the thread, erases the line and returns every byte read;
`replay()` feeds them to the app's key processor, so nothing typed is lost or doubled and Enter,
Backspace, arrows and Ctrl+C mean what they mean in the app. As in the app, Ctrl+C clears what was
typed and a second one within two seconds quits (the main thread gets KeyboardInterrupt: exit 130).

`pause()` gives the terminal back for a question read as a line (the trust question) and keeps the
bytes; `start()` again takes over once more; `stop()` ends it on every other way out and drops them.
What is printed meanwhile through `sys.stdout`/`sys.stderr` clears the prompt line first and draws it
again after a finished line, so a notice never lands behind the echoed keys.
"""

from __future__ import annotations

import os
import sys
import threading

from evo_agent.exit_codes import DOUBLE_CTRL_C_SECONDS  # as in the app: a second Ctrl+C within this quits

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: this module runs before the slow imports
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["PROMPT", "active", "keep", "pause", "quiet_interrupts", "replay", "start", "stop", "take"]

PROMPT = "› "  # the app's prompt label (ui/app.py `_prompt_label`), so the echo sits where the app's will
_ERASE = "\r\x1b[K"

_capture: _Capture | None = None
_kept = bytearray()  # bytes read before a pause(), handed on by the next take()


def quiet_interrupts() -> None:
    """A KeyboardInterrupt that cannot be raised is dropped, not printed.

    `interrupt_main()` raises it wherever the main thread is, and an import's module-lock callback (a weakref
    callback) cannot raise: Python printed `Exception ignored in: <function _get_module_lock.<locals>.cb …>`
    and its traceback on the terminal, 1 launch in ~5 quit with Ctrl+C twice. The keys that asked to quit are
    still in what was read, and the app, given them, quits with 130 all the same."""
    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous(unraisable)

    sys.unraisablehook = hook


class _Capture:
    """The reader thread, the echo on the prompt line, and the terminal mode it holds."""

    def __init__(self, fd: int, out: int, restore: Callable[[], None], columns: int, kept: bytes) -> None:
        import codecs

        self.fd, self.out, self.restore = fd, out, restore
        self.limit = max(columns - len(PROMPT) - 2, 1)  # the echo never wraps, so one erase clears it
        self.data = bytearray()
        self.shown: list[str] = []
        self.width = 0
        self.frozen = False  # after a key the echo cannot show (Enter, an arrow): the app shows the truth
        self.drawn = False
        self.last_ctrl_c = -DOUBLE_CTRL_C_SECONDS
        self.lock = threading.RLock()
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.wake_r, self.wake_w = os.pipe()
        self.streams: list[tuple[str, Any]] = []
        self._echo(kept)  # what was typed before a pause is shown again
        self.data += kept
        self.interrupt = False
        self.thread = threading.Thread(target=self._read, name="early-input", daemon=True)

    # ------------------------------------------------------------------ drawing
    def _write(self, text: str) -> None:
        try:
            os.write(self.out, text.encode("utf-8", "replace"))
        except OSError:
            pass

    def draw(self) -> None:
        with self.lock:
            if not self.drawn:  # the line first cleared: keys typed before the mode changed were echoed there
                self._write(_ERASE + PROMPT + "".join(self.shown))
                self.drawn = True

    def erase(self) -> None:
        with self.lock:
            if self.drawn:
                self._write(_ERASE)
                self.drawn = False

    def _echo(self, chunk: bytes) -> str:
        """Update the echo for `chunk`; what to write to the terminal."""
        out: list[str] = []
        interrupt = False
        for ch in self.decoder.decode(chunk):
            if ch == "\x03":
                import time

                now = time.monotonic()
                interrupt = interrupt or now - self.last_ctrl_c < DOUBLE_CTRL_C_SECONDS
                self.last_ctrl_c = now
                out.append("\b" * self.width + " " * self.width + "\b" * self.width)  # the app clears the prompt
                self.shown, self.width, self.frozen = [], 0, False
            elif self.frozen:
                continue
            elif ch in "\x7f\x08":
                if self.shown:
                    cells = _cells(self.shown.pop())
                    self.width -= cells
                    out.append("\b" * cells + " " * cells + "\b" * cells)
            elif ch.isprintable() and self.width + _cells(ch) <= self.limit:
                self.shown.append(ch)
                self.width += _cells(ch)
                out.append(ch)
            else:
                self.frozen = True
        if interrupt:
            self.interrupt = True
        return "".join(out)

    interrupt = False

    # ------------------------------------------------------------------ reading
    def _read(self) -> None:
        import select

        while True:
            try:
                ready, _, _ = select.select([self.fd, self.wake_r], [], [])
            except (OSError, ValueError):
                return
            if self.wake_r in ready:  # take(), pause() or stop(): what is still queued stays for the app
                return
            try:
                chunk = os.read(self.fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            with self.lock:
                self.data += chunk
                echo = self._echo(chunk)
                if echo and self.drawn:
                    self._write(echo)
            if self.interrupt:  # Ctrl+C twice: as the app does, quit
                import _thread

                quiet_interrupts()
                _thread.interrupt_main()
                return

    # ------------------------------------------------------------------ life
    def open(self) -> None:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            self.streams.append((name, stream))
            setattr(sys, name, _AroundPrompt(stream, self))
        self.draw()
        self.thread.start()

    def close(self, *, keep_mode: bool) -> bytes:
        """Stop reading, erase the line, put the streams back; the bytes read. The mode stays if `keep_mode`."""
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()
        for fd in (self.wake_r, self.wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        for name, stream in self.streams:
            wrapper = getattr(sys, name)
            if isinstance(wrapper, _AroundPrompt) and wrapper.capture is self:
                setattr(sys, name, stream)
        self.erase()
        self.closed = True
        if not keep_mode:
            self.restore()
        return bytes(self.data)

    closed = False


class _AroundPrompt:
    """sys.stdout/sys.stderr while the prompt line is drawn: clear it before a write, draw it after a line."""

    def __init__(self, stream: Any, capture: _Capture) -> None:
        self.stream = stream
        self.capture = capture

    def write(self, text: str) -> int:
        capture = self.capture
        if capture.closed:
            return self.stream.write(text)
        with capture.lock:
            capture.erase()
            written = self.stream.write(text)
            self.stream.flush()
            if text.endswith("\n") and not capture.closed:
                capture.draw()
        return written

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _cells(ch: str) -> int:
    """Terminal cells of one character: wide (CJK, emoji) two, else one."""
    if ch < "\u1100":
        return 1
    import unicodedata

    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def start() -> bool:
    """Hold the terminal, draw the prompt, echo keys until take(); False (nothing done) if stdin is no terminal."""
    global _capture
    if _capture is not None:
        return True
    from .typeahead import hold_keys

    restore = hold_keys(signals=False)
    if restore is None:
        return False
    try:
        out = sys.stdout.fileno()
        columns = os.get_terminal_size(out).columns
        fd = sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        restore()
        return False
    kept = bytes(_kept)
    _kept.clear()
    _capture = _Capture(fd, out, restore, columns, kept)
    _capture.open()
    return True


def active() -> bool:
    """Whether keys are being captured now."""
    return _capture is not None


def take() -> bytes:
    """The bytes typed so far (the app replays them); the line is erased, the terminal stays in input mode
    (Ctrl+C a signal again, as before the capture took it).

    The terminal's own mode comes back with stop() (cli/main.py's last step) or the atexit hook.
    """
    global _capture
    data = bytes(_kept)
    _kept.clear()
    if _capture is not None:
        capture, _capture = _capture, None
        data = capture.close(keep_mode=True)
        _restorers.append(capture.restore)
        _signals_on(capture.fd)
    return data


def _signals_on(fd: int) -> None:
    """Ctrl+C a signal again (the mode ui/typeahead.py holds): prompt_toolkit switches it off while it runs and
    puts this back after, so the shutdown that follows the app (MCP servers, the last push) can be interrupted."""
    import termios  # start() ran: this is a POSIX terminal

    try:
        attrs = termios.tcgetattr(fd)
        attrs[3] |= termios.ISIG
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    except (OSError, ValueError, termios.error):
        pass


_restorers: list[Callable[[], None]] = []


def pause() -> None:
    """Give the terminal back (echo, line editing, signals) for a question; the bytes wait for the next take()."""
    global _capture
    if _capture is not None:
        capture, _capture = _capture, None
        _kept[:] = capture.close(keep_mode=False)


def keep(data: bytes) -> None:
    """Keys read out of the terminal's queue by someone else (cli/main.py, before a question): for the next take()."""
    if _capture is not None:
        with _capture.lock:
            _capture.data += data
    else:
        _kept.extend(data)


def stop() -> None:
    """End the capture and give the terminal its own mode back; what was typed is dropped (no app will read it)."""
    global _capture
    if _capture is not None:
        capture, _capture = _capture, None
        capture.close(keep_mode=False)
    while _restorers:
        _restorers.pop()()
    _kept.clear()


def replay(app: Any, data: bytes, *, now: bool = False) -> None:
    """Hand `data` to a prompt_toolkit Application as if it had just been typed; call it in the app's pre-run.

    The text typed (printable keys and Backspace) becomes prompt_toolkit's typeahead, which the app
    processes before it draws its first frame, so that frame already shows it. From the first other
    key on (Enter, Ctrl+C, an arrow: their handlers may print or redraw, which needs a drawn app) the
    keys are processed just after. `now=True`: all of them just after (a prompt given on the command
    line, submitted in the same way, must go first).
    """
    import asyncio

    from prompt_toolkit.input.typeahead import store_typeahead
    from prompt_toolkit.input.vt100_parser import Vt100Parser
    from prompt_toolkit.keys import Keys

    keys: list[Any] = []
    parser = Vt100Parser(keys.append)
    parser.feed(data.decode("utf-8", "replace"))
    parser.flush()
    cut = 0
    while not now and cut < len(keys) and (keys[cut].key == Keys.ControlH or (
            len(keys[cut].key) == 1 and keys[cut].key.isprintable())):
        cut += 1
    store_typeahead(app.input, keys[:cut])
    if keys[cut:]:
        def later() -> None:
            app.key_processor.feed_multiple(keys[cut:])
            app.key_processor.process_keys()

        asyncio.get_running_loop().call_soon(later)
