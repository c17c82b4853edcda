"""The `evo-agent` command line (SPEC §5).

    evo-agent                      interactive (line REPL for now; see `use_tui`)
    evo-agent -p PROMPT            one query to completion; the answer on stdout
    evo-agent --resume [ID]        resume (a unique prefix is enough); no ID: choose from a list
    evo-agent -c / --continue      resume the most recently updated session
    evo-agent sessions list|show|export|fsck|rm|prune ...   (see cli/sessions/)

A session starts in four steps (`_agent`): check the arguments, choose the
source session, open it, run the front end. Every foreseeable failure is an
exception carrying its exit code (errors.py: 2 for usage, 1 otherwise), printed
by `run` as one line on stderr starting with "evo-agent: ", never a traceback. Every
way out of a session ends with `Resume this session with: evo-agent --resume <id>`
(stderr in print mode, stdout otherwise).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from .entry import app_likely, asks_first, collector_on
from .errors import (
    EXIT_FAILURE,
    EXIT_HANGUP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    CommandError,
    UsageError,
    exit_code_of,
    failure_line,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms): `--help` loads this module
if TYPE_CHECKING:
    from argparse import ArgumentParser, Namespace
    from collections.abc import Callable, Mapping
    from pathlib import Path
    from typing import Any, TextIO

    from evo_agent.agent import Agent
    from evo_agent.agent.permissions import PermissionGate
    from evo_agent.agent.resuming import Resumed
    from evo_agent.agent.settings import Settings
    from evo_agent.session import LiveSessionStore, MemoryStore, WorkspaceTrust
    from evo_agent.tools.mcp_client import McpManager
    from evo_agent.tools.sandbox import Sandbox
    from evo_agent.ui.picker import TeamSource

    from .runtime import Console, Signals

_PICK = "\0pick"  # `--resume` given without an id


# The provider names as --help shows them, without importing the providers (test_choice checks it).
PROVIDER_CHOICES = "anthropic, openai or demo"


_REDACT_ON = ("", "1", "true", "yes", "on")
_REDACT_OFF = ("0", "false", "no", "off")


def redaction_enabled(environ: Mapping[str, str]) -> bool:
    """EVO_AGENT_REDACT: secret shapes are masked on disk unless it says 0/false/no/off (README, Secrets)."""
    value = environ.get("EVO_AGENT_REDACT", "").strip().lower()
    if value in _REDACT_ON:
        return True
    if value in _REDACT_OFF:
        return False
    raise UsageError(f"EVO_AGENT_REDACT must be 1 (mask secrets in transcripts, the default) or 0, not {value[:20]!r}")


BYPASS_WARNING = ("evo-agent: permission mode bypass: every tool call runs unasked "
                  "(edits, any command, files outside the project)")


def permission_gate(args: Namespace, project_dir: Path, environ: Mapping[str, str], *,
                    trusted: WorkspaceTrust | None = None,
                    say: Callable[[str], object] | None = None) -> tuple[PermissionGate, Settings]:
    """The permission gate for this run: mode from --permission-mode, the env, settings, else ask.

    The project's `.evo-agent/settings.json` is obeyed only when the project is `trusted` (workspace.py), as
    the trust question showed it (its bytes, not the file read again), and even then never when it is a
    link, another user's, writable by others or larger than 1 MiB (one line through `say`). The
    user's own "always in this project" rules always apply. A bad mode or rule is a usage error; an
    unusable settings file a plain error.
    """
    from evo_agent.agent.permissions import DEFAULT_MODE, ModeError, PermissionGate, Policy, check_mode
    from evo_agent.agent.rules import RuleError, parse_rules
    from evo_agent.agent.settings import (
        Settings,
        SettingsError,
        SettingsRefused,
        add_project_rule,
        load_user_rules,
        settings_as_shown,
    )

    settings = Settings()
    try:
        if trusted is not None and trusted.settings:  # not when the user chose only the MCP servers
            try:
                settings = settings_as_shown(project_dir, trusted.brought)
            except SettingsRefused as exc:  # the path is the project's (an archive's name): shown, never obeyed
                from evo_agent.safe_text import terminal_safe

                (say or _err_line)(terminal_safe(f"evo-agent: {exc}", keep_newlines=False))
        own = load_user_rules(project_dir)
        _say_rules_set_aside(project_dir, say or _err_line)
    except SettingsError as exc:
        raise CommandError(str(exc)) from None
    try:
        if args.permission_mode is not None:
            mode = check_mode(args.permission_mode)
        elif environ.get("EVO_AGENT_PERMISSION_MODE", "").strip():
            mode = check_mode(environ["EVO_AGENT_PERMISSION_MODE"], "EVO_AGENT_PERMISSION_MODE")
        elif settings.permission_mode:
            mode = check_mode(settings.permission_mode, ".evo-agent/settings.json permission_mode")
        else:
            mode = DEFAULT_MODE
        cli_rules = parse_rules(args.allowed_tools or "")
    except (ModeError, RuleError) as exc:
        raise UsageError(str(exc)) from None
    policy = Policy(project_dir, mode, cli_rules, settings.allow + own)
    return PermissionGate(policy, persist=lambda rule: add_project_rule(project_dir, rule)), settings


def _say_rules_set_aside(project_dir: Path | str, say: Callable[[str], object]) -> None:
    """One line when this path's "always" rules were granted in a directory since deleted (see rules_set_aside)."""
    from evo_agent.session import rules_set_aside

    count = rules_set_aside(project_dir)
    if count:
        say(f"evo-agent: your {count} \"always in this project\" rule{'s' if count > 1 else ''} for this path "
            "were granted in a directory since deleted (cloned again?): set aside; answer again to grant them here")


def _err_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def workspace_trusted(project_dir: Path, *, interactive: bool) -> WorkspaceTrust | None:
    """What the project brings (`.evo-agent/settings.json`, `.mcp.json`) when it applies to this run, else None.

    Trusted: the files as read for the trust check (their bytes are what the run obeys). Bringing nothing:
    nothing to obey. Otherwise an interactive run asks once (the answer is remembered in the user's config);
    print mode and piped input say in one line that it is ignored.
    """
    from evo_agent.session import workspace_trust

    status = workspace_trust(project_dir)
    if status.trusted or not status.brought:
        return status if status.trusted else None
    from evo_agent.ui import early_input

    from .workspace import settle

    held = _restore_tty is not None
    echoing = early_input.active()
    if interactive:  # the question is read as a line (echoed, edited); keys typed before it wait for the app
        early_input.pause() if echoing else release_tty()
    trusted = settle(status, interactive=interactive, ask=_ask, say=_err_line)
    if echoing:
        early_input.start()
    elif held:  # keys typed from here until the app draws wait for it again (ui/typeahead.py)
        from evo_agent.ui.typeahead import hold_keys

        _hold(hold_keys())
    return trusted


def _hold(restore: Callable[[], None] | None) -> None:
    global _restore_tty
    _restore_tty = restore


def sandbox_for(args: Namespace, settings: Settings, project_dir: Path) -> Sandbox | None:
    """The bubblewrap sandbox when --sandbox (or the setting) asks for one; an error where it cannot run."""
    if args.sandbox_network and not (args.sandbox or settings.sandbox):
        raise UsageError("--sandbox-network only makes sense with --sandbox")
    if not (args.sandbox or settings.sandbox):
        return None
    from evo_agent.tools.sandbox import SandboxError, check_sandbox

    try:
        return check_sandbox(project_dir, network=args.sandbox_network or settings.sandbox_network)
    except SandboxError as exc:
        raise CommandError(str(exc)) from None


def _project_dir(args: Namespace) -> Path:
    """--project-dir as given, else found from the current directory as git finds its repository (SPEC §1)."""
    from pathlib import Path  # here: `--help` never needs it

    from evo_agent.session import find_project_dir

    raw = getattr(args, "project_dir", None)
    if not raw:
        return find_project_dir(Path.cwd())
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise CommandError(f"project directory {str(path)!r} does not exist or is not a directory")
    return Path(os.path.abspath(path))  # `../..` made absolute and normal: recorded as `cwd`, named by the exit hint


def main(argv: Sequence[str] | None = None) -> None:
    if argv is None:  # `python -m evo_agent.cli.main` skips entry.py
        from .startup_env import clean_start

        clean_start()
    sys.exit(run(argv))


_restore_tty = None  # set while keys typed during start-up are held for the app (ui/typeahead.py)


# The subcommands that need no model, parsed by their own module: name -> (module, function(argv, find_project)).
MODEL_FREE: dict[str, tuple[str, str]] = {
    "plan": (".plan_command", "run_plan"),  # the Session Plan
    "memory": (".memory_command", "run_memory"),  # Auto Memory
    "sync": (".sync_command", "run_sync"),  # the team store's admin: migrate, index
    "mcp": (".mcp_command", "run_mcp"),  # MCP servers: list, get, add, remove
}


def release_tty() -> None:
    """Give the terminal back its own mode (echo, line editing) if start-up held the keys."""
    global _restore_tty
    if _restore_tty is not None:
        restore, _restore_tty = _restore_tty, None
        restore()


def run(argv: Sequence[str] | None = None) -> int:
    global _restore_tty
    words = sys.argv[1:] if argv is None else list(argv)
    if app_likely(words):
        # As early as possible (the console script already started it, cli/entry.py): keys typed while
        # we start are shown at once and handed to the app (ui/early_input.py); before a resume, which
        # may ask first, they only wait (ui/typeahead.py).
        from evo_agent.ui import early_input

        if early_input.active() or (not asks_first(words) and early_input.start()):
            _restore_tty = early_input.stop
        else:
            from evo_agent.ui.typeahead import hold_keys

            _restore_tty = hold_keys()
    try:
        return _run(argv)
    except KeyboardInterrupt:  # Ctrl+C twice while the app started (ui/early_input.py), as the app quits
        return EXIT_INTERRUPTED
    finally:
        release_tty()


def _run(argv: Sequence[str] | None = None) -> int:
    # Bytes that are not UTF-8 (a pasted Latin-1 line, a binary file piped in) become U+FFFD on the way
    # in and out: they can neither crash a read nor reach the API or the transcript as lone surrogates.
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    words = sys.argv[1:] if argv is None else list(argv)
    if words[:1] and words[0] in MODEL_FREE:  # `evo-agent plan|memory|sync …`: no model, a module each
        release_tty()
        module, function = MODEL_FREE[words[0]]
        try:
            import importlib

            run = getattr(importlib.import_module(module, __package__), function)
            return run(words[1:], _project_dir)
        except Exception as exc:
            code = exit_code_of(exc)
            if code is None:
                raise
            print(failure_line(exc), file=sys.stderr)
            return code
    args = parse_arguments(argv)  # --help and --version end here, before the imports below
    if args.command in ("sessions", "trust") or args.print_prompt is not None or not use_tui(args):
        release_tty()
    try:
        if args.command == "sessions":
            return _sessions(args)
        if args.command == "trust":
            from .workspace import run_trust

            return run_trust(args, _project_dir(args))
        return _agent(args)
    except (Exception, KeyboardInterrupt) as exc:  # KeyboardInterrupt: before a session exists (the picker)
        code = exit_code_of(exc)  # each failure carries its exit code (errors.py); None: a bug (its traceback helps)
        if code is None:
            raise
        print(failure_line(exc), file=sys.stderr)
        return code


def parse_arguments(argv: Sequence[str] | None) -> Namespace:
    """The arguments, whether they start a session (`evo-agent [PROMPT]`) or name a command (`evo-agent sessions …`).

    A plain `-p PROMPT` is read here (`plain_print_arguments`); everything else by argparse (parser.py).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    plain = plain_print_arguments(argv)
    if plain is not None:
        return plain
    from .parser import parse_arguments as parse

    return parse(argv)


# What the agent's parser gives a run that sets no option (tests/cli/test_print_fast_path.py holds them equal).
_AGENT_DEFAULTS: dict[str, object] = {
    "print_prompt": None, "output_format": None, "plain": False, "resume": None, "at": None, "restore_files": False,
    "continue_": False, "name": None, "model": None, "provider": None, "project_dir": None, "permission_mode": None,
    "allowed_tools": None, "sandbox": False, "sandbox_network": False, "help": False, "prompt": None, "command": None}


def plain_print_arguments(argv: Sequence[str]) -> Namespace | None:
    """`-p PROMPT` / `--print PROMPT` and nothing else, read without argparse; None for anything else.

    PROMPT must not start with `-` (argparse would read it as an option) nor be empty: those forms,
    like every other, are left to the parser, which reads them as it always did.
    """
    if len(argv) != 2 or argv[0] not in ("-p", "--print") or not argv[1] or argv[1].startswith("-"):
        return None
    from types import SimpleNamespace

    return SimpleNamespace(**{**_AGENT_DEFAULTS, "print_prompt": argv[1]})  # type: ignore[return-value]


def build_parser(*, sessions: bool = True) -> ArgumentParser:
    """The command line (parser.py). `sessions=False`: the agent's options plus a positional PROMPT."""
    from .parser import build_parser as build

    return build(sessions=sessions)


def _sessions(args: Namespace) -> int:
    from .sessions.command import run_sessions

    return run_sessions(args, _project_dir(args))


def use_tui(args: Namespace) -> bool:
    """Whether the interactive session runs in the TUI: a terminal on both ends and no --plain."""
    return not args.plain and sys.stdin.isatty() and sys.stdout.isatty()


def team_source(store: object, project_dir: Path) -> TeamSource | None:
    """The picker's team view (Tab) when a team store is configured; None hides it (ui may not import sync)."""
    if getattr(store, "sync_url", None) is None:
        return None
    from evo_agent.sync.hooks import team_sessions

    return lambda: team_sessions(project_dir)


def _run_app(agent: Agent, store: LiveSessionStore, *, initial_prompt: str | None = None,
             resumed: Resumed | None = None) -> int:
    """The interactive app until the user leaves; SIGTERM and SIGHUP end it from inside its event loop (ui/app.py)."""
    from evo_agent.ui.app import run_app

    from .runtime import Terminated

    try:
        return run_app(agent, store=store, initial_prompt=initial_prompt, resumed=resumed,
                       team=team_source(store, agent.project_dir))
    except KeyboardInterrupt:  # a signal that arrived before or after the app's own handlers
        return EXIT_INTERRUPTED
    except Terminated as exc:
        return exc.exit_code
    except OSError:  # the terminal went away under the app (EIO): leave as on SIGHUP
        return EXIT_HANGUP


def keep_secrets_from_tools() -> bool:
    """prctl(PR_SET_DUMPABLE, 0): the agent's `/proc/<pid>/environ`, `mem`, `fd/` become root's (SPEC §9).

    Stripping the keys from a tool's environment does not change what the kernel serves for the
    agent itself; a process that is not dumpable cannot be read or ptraced by another process of
    the same user (ssh-agent does the same). Its children are dumpable again after exec. Linux
    only; on the session path only, before anything is spawned. True when the flag is set.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        return _prctl(_PR_SET_DUMPABLE, 0) == 0
    except (OSError, AttributeError, ImportError, TypeError):
        return False


_PR_SET_DUMPABLE = 4


def _prctl(option: int, value: int) -> int:
    """libc's prctl(option, value, 0, 0, 0), called through `_ctypes`, the C half of ctypes.

    `import ctypes` (its Python half: the types, struct, the loaders) was ~8 M instructions of `-p hi`
    before its first request (issue #30); one C function returning an int needs only the two classes
    below, which are what `ctypes.CDLL(None, use_errno=True).prctl` builds (c_int, a cdecl function).
    """
    import _ctypes

    class _Int(_ctypes._SimpleCData):  # ctypes.c_int
        _type_ = "i"

    class _Function(_ctypes.CFuncPtr):  # ctypes.CDLL(None, use_errno=True)'s function type
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = _Int

    class _Process:  # the program and the libraries it loaded: dlopen(NULL), as CDLL(None)
        _handle = _ctypes.dlopen(None)  # type: ignore[arg-type]  # typeshed: a path only, yet None is NULL

    # typeshed wants a CDLL: the function type reads only its `_handle`
    result: int = _Function(("prctl", _Process))(option, value, 0, 0, 0)  # type: ignore[arg-type]
    return result


def _agent(args: Namespace) -> int:
    """`evo-agent [PROMPT]`, `-p`, `--resume`, `-c`: four steps, each refusing with one line before the next starts."""
    keep_secrets_from_tools()
    launch = _check_arguments(args)
    source = _choose_source(launch)
    if source is None:  # Esc in the picker: nothing to do, and nothing went wrong
        launch.console.line("No session chosen; nothing was resumed.")
        return EXIT_OK
    agent, resumed = _open_session(launch, source)
    return _run_front_end(launch, agent, resumed)


class _Launch:
    """What step 1 checked (the arguments and the environment) and opened (the project's store).

    A plain class, not a dataclass: `dataclasses` loads `inspect` (~10 ms), and `--help` loads this module.
    """

    def __init__(self, args: Namespace, print_mode: bool, stdin_tty: bool, project_dir: Path,
                 prompt: str | None, compact_chars: int | None, provider_name: str, provider_notice: str | None,
                 gate: PermissionGate, sandbox: Sandbox | None, trusted: WorkspaceTrust | None, store: LiveSessionStore,
                 console: Console) -> None:
        self.args = args
        self.print_mode = print_mode
        self.stdin_tty = stdin_tty
        self.project_dir = project_dir
        self.prompt = prompt  # -p's prompt (piped stdin appended), or the interactive session's first one
        self.compact_chars = compact_chars  # EVO_AGENT_COMPACT_CHARS; None: the default
        self.provider_name = provider_name
        self.provider_notice = provider_notice  # e.g. "no API key: the demo provider"
        self.gate = gate
        self.sandbox = sandbox
        self.trusted = trusted  # what the project brings, obeyed in this run as shown; None: nothing of it
        self.store = store  # or the team store's subclass of it (sync/hooks.py)
        self.console = console

    @property
    def app(self) -> bool:
        """The interactive app (TUI) runs, rather than print mode or the line REPL."""
        return not self.print_mode and use_tui(self.args)

    def notify(self, text: str) -> None:
        """A line for the user: on stderr in print mode (stdout is the answer), else on stdout."""
        (self.console.err_line if self.print_mode else self.console.line)(text)


class _Source:
    """The session a run continues (step 2), as the user named it; resolved and checked by the resume (step 3)."""

    def __init__(self, id: str | None = None,  # noqa: A002 - an id, a unique prefix or a name; None: a new session
                 confirm: Callable[[str, str], bool] | None = None) -> None:
        self.id = id
        self.confirm = confirm  # asked when it was recorded elsewhere; None: refused (print mode, piped input, -c)


def _check_arguments(args: Namespace) -> _Launch:
    """Step 1: the arguments and the environment, checked before anything is read or created; then the store."""
    from evo_agent.providers import ProviderError, choose_provider_name, client_limits
    from evo_agent.session import SESSIONS_SUBDIR, check_sessions_dir
    from evo_agent.sync.hooks import session_store

    from .runtime import Console

    print_mode = args.print_prompt is not None
    _check_mode_arguments(args, print_mode)
    stdin_tty = _isatty(sys.stdin)
    compact_chars = compact_threshold(os.environ)
    project_dir = _project_dir(args)
    redact = redaction_enabled(os.environ)
    prompt = _session_prompt(args, print_mode, stdin_tty)
    try:
        provider_name, provider_notice = choose_provider_name(args.provider, os.environ)
        client_limits(os.environ)
    except ProviderError as exc:  # an unknown provider name, a bad API timeout: usage errors
        raise UsageError(str(exc)) from None
    # Before anything is read from `.evo-agent` (settings.json too): a symlinked or foreign-owned one is one line.
    dir_notice = check_sessions_dir(project_dir, project_dir / SESSIONS_SUBDIR)
    # A repository's settings grant authority only once the user trusts the project (asked once, interactively).
    trusted = workspace_trusted(project_dir, interactive=not print_mode and stdin_tty)
    gate, settings = permission_gate(args, project_dir, os.environ, trusted=trusted)
    sandbox = sandbox_for(args, settings, project_dir)
    # holds the live session's lock (`sessions rm/prune` leave it alone); fetches from the team store when configured
    store = session_store(project_dir, redact=redact)
    console = Console()
    if dir_notice:
        console.err_line(dir_notice)
    return _Launch(args, print_mode, stdin_tty, project_dir, prompt, compact_chars, provider_name, provider_notice,
                   gate, sandbox, trusted, store, console)


def _session_prompt(args: Namespace, print_mode: bool, stdin_tty: bool) -> str | None:
    """-p's prompt with what was piped in, or `evo-agent PROMPT`'s; UsageError when it is empty."""
    if print_mode:
        return print_prompt_text(args, None if stdin_tty else sys.stdin)
    if args.prompt is None:
        return None
    prompt = _valid_text(args.prompt)
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return prompt


def _choose_source(launch: _Launch) -> _Source | None:
    """Step 2: the session to continue (-c, --resume ID, the picker), or none; None when the user chose none.

    Resolved and checked by the one resume path in step 3: a missing, ambiguous or refused session is one line,
    and nothing is left on disk (the new session is deferred until then).
    """
    args = launch.args
    if args.continue_:
        return _Source(_latest_session(launch))  # never a foreign one: nothing to confirm
    if args.resume == _PICK:
        chosen = _pick_session(launch)
        if chosen is None:
            return None
    elif args.resume is not None:
        chosen = args.resume
    else:
        return _Source()
    from .trust import foreign_confirm  # here: a new session (`-p hi`) loads no trust checks (start-up, SPEC §8)

    return _Source(chosen, foreign_confirm(interactive=not launch.print_mode and launch.stdin_tty, ask=_ask))


def _latest_session(launch: _Launch) -> str:
    """-c: the most recently updated session of this user here; CommandError when there is none."""
    from evo_agent.safe_text import terminal_safe

    row = launch.store.latest()  # never a foreign session
    if row is not None:
        return row.id
    foreign = [r for r in launch.store.newest(1) if r.foreign]
    planted = (f" (sessions recorded elsewhere are never continued: {foreign[0].id} is "
               f"{terminal_safe(foreign[0].foreign or '')}; see evo-agent sessions list)") if foreign else ""
    raise CommandError(f"no session to continue in {launch.project_dir}{planted}")


def _pick_session(launch: _Launch) -> str | None:
    """--resume without an id: the picker in the app, a numbered list otherwise; None when none was chosen."""
    from .sessions.listing import pick_session

    store = launch.store
    team = team_source(store, launch.project_dir) if launch.app else None
    if store.latest() is None and team is None:  # one meta.json read, not all: the picker lists the rest
        raise CommandError(f"no session to resume in {launch.project_dir}")
    if launch.app:  # a fresh clone with a team store: the picker opens on the team's sessions
        from evo_agent.ui.picker import run_picker

        return run_picker(launch.project_dir, team=team)

    def read(prompt: str) -> str | None:
        if launch.stdin_tty:
            return _ask(prompt)
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None

    return pick_session(store.list(), launch.console.line, read)


def _ask(prompt: str) -> str | None:
    """A line typed at the terminal; None at EOF.

    The terminal is put in line mode first (echo, Enter ends the line): the full-screen picker that may have
    run just before can leave it without ICRNL, and then Enter would never end the answer.
    """
    from evo_agent.ui.typeahead import bracket_pastes

    from .fold import fold

    prompt = fold(prompt, _columns(sys.stdout))  # between words, as the terminal would not
    _set_aside_typeahead(sys.stdin)  # typed before the question: meant for the prompt, never its answer (SPEC §9)
    saved = _line_mode(sys.stdin)
    try:
        while True:
            bracket_pastes(True)
            try:
                line = input(prompt)
            finally:
                bracket_pastes(False)
            # A line with more queued behind it (or marked as pasted) came in a paste: "y" then a prompt meant
            # for the app trusted a repository. What came with it is kept for the app; the question is asked again.
            if not _set_aside_typeahead(sys.stdin) and "\x1b[200~" not in line:
                return line
            print("  (that line came with more text: pasted, not taken as its answer)", flush=True)
    except EOFError:
        print(flush=True)  # Ctrl+D: what is said next starts a line of its own, not after the question
        return None
    except KeyboardInterrupt:
        print(flush=True)  # after the terminal's ^C, as for Ctrl+D
        raise
    finally:
        if saved is not None:
            import termios

            try:
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, saved)
            except (termios.error, OSError, ValueError):
                pass


def _columns(stream: TextIO) -> int | None:
    """The width of the terminal `stream` writes to (None when it is not a terminal)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):
        return None


def _set_aside_typeahead(stream: TextIO) -> bool:
    """Take what is already waiting in the terminal's input queue out of the way of a question.

    Keys typed while the program started (held in the queue, ui/typeahead.py, or a whole line typed before
    it ran) would otherwise be read by the question's `input()` as its answer: an early `y` and Enter,
    meant for the prompt, trusted a repository or resumed a planted session. They are read here without
    waiting and kept for the app's prompt (ui/early_input.py replays them), never given to the question.
    Whether anything was waiting.
    """
    try:
        import termios

        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except Exception:  # noqa: BLE001 - not a terminal (or no termios): a pipe's lines are answers by design
        return False
    from evo_agent.ui.typeahead import waiting_keys

    data = waiting_keys(fd, saved)
    if data:
        from evo_agent.ui import early_input

        early_input.keep(data)
    return bool(data)


def _line_mode(stream: TextIO) -> list[Any] | None:
    """Canonical mode, echo and CR→NL on a terminal `stream`; its previous attributes (None: not a terminal)."""
    try:
        import termios

        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
        sane: list[Any] = [list(a) if isinstance(a, list) else a for a in saved]
        sane[0] |= termios.ICRNL
        sane[3] |= termios.ICANON | termios.ECHO
        termios.tcsetattr(fd, termios.TCSANOW, sane)
        return saved
    except Exception:  # noqa: BLE001 - not a terminal (or no termios): input() as it is
        return None


def _open_session(launch: _Launch, source: _Source) -> tuple[Agent, Resumed | None]:
    """Step 3: the provider and the session — a new one, or one resumed from the source (agent/resuming.py)."""
    from evo_agent.agent import Agent
    from evo_agent.providers import make_provider

    args, store, console = launch.args, launch.store, launch.console
    provider = make_provider(launch.provider_name, args.model or os.environ.get("EVO_AGENT_MODEL"))
    warm_up = getattr(provider, "warm_up", None)
    if warm_up is not None:
        warm_up()  # the TCP and TLS handshakes overlap loading the session
    if launch.provider_notice:
        console.err_line(launch.provider_notice)
    from evo_agent.agent.instructions import begin_instructions, start_dir_of
    from evo_agent.safe_text import terminal_safe

    # Deferred: a launch that ends before anything is said leaves no session behind, and a resume's never begins.
    recorder = store.create(model=provider.model, provider=provider.name, deferred=True)
    instructions = None  # a resume takes its source's instructions and start directory, as its model was given them
    if source.id is None:
        start_dir = start_dir_of(launch.project_dir, os.getcwd())  # tools run where the user started, if inside
        instructions = begin_instructions(recorder, launch.project_dir, start_dir, redact=store.redact)
        if instructions.cut and launch.print_mode:  # the app and the REPL say it on their welcome line
            console.err_line(f"evo-agent: {terminal_safe(instructions.cut, keep_newlines=False)}")
    agent = Agent(provider=provider, recorder=recorder, project_dir=launch.project_dir, store=store,
                  compact_threshold=launch.compact_chars, permissions=launch.gate, sandbox=launch.sandbox,
                  instructions=instructions, memory=memory_store(launch.project_dir, os.environ),
                  mcp=mcp_servers(launch.project_dir, launch.trusted, console.err_line))
    resumed = _resume(launch, agent, source) if source.id is not None else None
    if launch.print_mode and agent.mcp.manager is not None:
        agent.mcp.manager.start()  # the first request follows at once: connecting overlaps the rest of start-up
    if args.at is not None:
        agent.hold_conversation()  # a rewind: the exit hint names it, not its source
    if args.name is not None:
        try:
            agent.rename(args.name)
        except ValueError as exc:
            raise UsageError(f"--name: {exc}") from None
    if launch.gate.mode == "bypass":
        console.err_line(BYPASS_WARNING)
    return agent, resumed


def memory_store(project_dir: Path, environ: Mapping[str, str]) -> MemoryStore | None:
    """Auto Memory of this project and user, unless EVO_AGENT_MEMORY turns it off (`0`, `off`, `false`, `no`)."""
    if environ.get("EVO_AGENT_MEMORY", "").strip().lower() in ("0", "off", "false", "no"):
        return None
    from evo_agent.session import MemoryStore

    return MemoryStore(project_dir, environ=environ)


def mcp_servers(project_dir: Path, trusted: WorkspaceTrust | None,
                say: Callable[[str], object]) -> McpManager | None:
    """The session's MCP servers (SPEC §13), not started: they start at its first request (agent/mcp_context.py).

    The user's own config, and the project's `.mcp.json` when the project is trusted; each entry that cannot be
    used is one line through `say`, and the session goes on. Values given to servers are masked in transcripts.
    """
    if _no_mcp_config(project_dir):  # the common case, decided without importing the config reader (start-up)
        return None
    from evo_agent.tools.mcp_config import McpConfigError, expand_server, load_servers, register_secrets

    loaded = load_servers(project_dir, trusted=False if trusted is None else trusted)
    for line in loaded.problems:
        say(line if line.startswith("evo-agent:") else f"evo-agent: {line}")
    ready = []
    for server in loaded.servers:
        try:
            expanded = expand_server(server)
        except McpConfigError as exc:
            say(f"evo-agent: {exc}; not started")
            continue
        register_secrets(expanded)
        ready.append(expanded)
    if not ready:
        return None
    from evo_agent.tools.mcp_client import McpManager

    return McpManager(ready, project_dir)


def _no_mcp_config(project_dir: Path) -> bool:
    """Neither the user's MCP config nor the project's `.mcp.json` is there (not even as a link).

    Only "no such file" counts: anything else (a link, a directory in the way, no permission) is left
    to the config reader, which says what is wrong as it always did.
    """
    from evo_agent.session import MCP_CONFIG_NAME, USER_MCP_CONFIG_NAME, user_config_dir

    for path in (user_config_dir(os.environ) / USER_MCP_CONFIG_NAME, project_dir / MCP_CONFIG_NAME):
        try:
            os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError:
            pass
        return False
    return True


def _resume(launch: _Launch, agent: Agent, source: _Source) -> Resumed:
    """The agent continued from `source` by the one resume path; `--at N --restore-files`; what the user sees."""
    from evo_agent.agent.restored import WindowedSummaryFailed

    args = launch.args
    try:  # over the threshold: summarised before anything else is sent (SPEC §8)
        resumed = agent.resume(source.id or "", confirm=source.confirm, before_turn=args.at, load_whole=False)
    except WindowedSummaryFailed as exc:
        raise CommandError(str(exc)) from None
    if args.at is not None and args.restore_files:
        _restore_files(launch, resumed.source, args.at)
    if not launch.app:  # the app shows it all once it runs
        from .repl import show_resumed

        show_resumed(launch.console, resumed, view=not launch.print_mode, to_stderr=launch.print_mode,
                     tty=launch.stdin_tty and _isatty(sys.stdout))
    return resumed


def _restore_files(launch: _Launch, source: str, turn: int) -> None:
    """`--at N --restore-files`: the files (and the plan) the source changed from user turn N on, put back."""
    from evo_agent.agent.file_restore import pending_changes, pending_plan_updates, restore_files, restore_plan

    store = launch.store
    # `_ask`, never a bare input(): the keys this launch held while it started are not the answer (SPEC §9)
    ask = None if launch.print_mode or not launch.stdin_tty else (
        lambda q: ((_ask(q) or "").strip().lower() in ("y", "yes")))
    restore_files(pending_changes(store, source, turn), launch.notify, ask, project_dir=launch.project_dir)
    updates = pending_plan_updates(store, source, turn)
    if updates:
        restore_plan(launch.project_dir, updates, launch.notify)


def _run_front_end(launch: _Launch, agent: Agent, resumed: Resumed | None) -> int:
    """Step 4: print mode, the app or the REPL until the user leaves; the exit hint is the last line."""
    from evo_agent.sync.hooks import start_agent_sync, stop_agent_sync

    from .runtime import Signals, finish, hard_exit_if_stuck

    collector_on()  # off since entry.py when the arguments asked for print mode
    console = launch.console
    sync = start_agent_sync(agent, launch.store)  # None unless EVO_AGENT_SYNC_URL: then each turn is pushed
    signals = Signals(console)
    signals.install()
    code = EXIT_FAILURE
    try:
        if launch.print_mode:
            code = _print_mode(agent, launch.prompt or "", console, signals, launch.args.output_format or "text")
        elif launch.app:
            code = _run_app(agent, launch.store, initial_prompt=launch.prompt, resumed=resumed)
        else:
            from .repl import Repl  # the line REPL only: print mode and the app never load it (start-up)

            code = Repl(agent, launch.store, console, signals, tty=launch.stdin_tty).run(initial_prompt=launch.prompt)
    finally:
        signals.exiting = True
        agent.close()  # its MCP servers: stdin closed, then their process groups ended
        stop_agent_sync(sync, agent)  # a bounded wait for the last push; before the exit hint, the last line
        finish(agent, console, to_stderr=launch.print_mode or not _isatty(sys.stdout))  # stdout stays the answer
    release_tty()
    hard_exit_if_stuck(code)
    return code


def _check_mode_arguments(args: Namespace, print_mode: bool) -> None:
    """Combinations that make no sense, refused before anything is read or created (exit 2)."""
    if args.resume is not None and args.continue_:
        raise UsageError("--resume and --continue cannot be used together")
    if args.at is not None and args.resume is None and not args.continue_:
        raise UsageError("--at needs --resume ID or --continue: it names a turn of that session")
    if args.restore_files and args.at is None:
        raise UsageError("--restore-files needs --at N: the files are restored to before turn N")
    if print_mode and args.resume == _PICK:
        raise UsageError("--resume needs a session id in print mode (evo-agent sessions list shows them)")
    if print_mode and args.plain:
        raise UsageError("--plain is for interactive mode; it cannot be combined with --print")
    if args.output_format is not None and not print_mode:
        raise UsageError("--output-format is for print mode: use it with -p")


def print_prompt_text(args: Namespace, piped: TextIO | None) -> str:
    """-p's prompt: its value and/or the positional PROMPT, then what was piped into stdin.

    As in `cat log | evo-agent -p "what failed?"`.
    """
    parts = [p for p in (args.print_prompt, args.prompt) if p]
    if piped is not None:
        try:
            data = piped.read()
        except (OSError, ValueError):
            data = ""
        if data and data.strip():
            parts.append(data.rstrip("\n"))
    prompt = _valid_text("\n\n".join(parts))
    if not prompt.strip():
        raise UsageError("the prompt is empty (give one after -p, or pipe text into stdin)")
    return prompt


def compact_threshold(environ: Mapping[str, str]) -> int | None:
    """EVO_AGENT_COMPACT_CHARS as a whole number of characters > 0; None when unset (the default applies)."""
    raw = environ.get("EVO_AGENT_COMPACT_CHARS")
    if raw is None or not raw.strip():
        return None
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise UsageError(f"EVO_AGENT_COMPACT_CHARS must be a whole number of characters above 0, not {raw[:20]!r}")
    return value


def _print_mode(agent: Agent, prompt: str, console: Console, signals: Signals, output_format: str = "text") -> int:
    """One turn to completion; stdout gets the answer as `output_format` says (print_output.py)."""
    from .print_output import PrintOutput
    from .runtime import Terminated, crash_line, run_turn

    output = PrintOutput(output_format, agent, console)
    try:
        outcome = run_turn(agent, prompt, output.callbacks(), signals)
    except KeyboardInterrupt:
        console.error("interrupted")
        output.failure("interrupted", "error_interrupted")
        return EXIT_INTERRUPTED
    except Terminated as exc:
        console.error(exc.what)
        output.failure(exc.what, "error_interrupted")
        return exc.exit_code
    if outcome.error is not None:
        console.error(str(outcome.error))
        output.failure(str(outcome.error))
        return EXIT_FAILURE
    if outcome.crash is not None:
        console.err_line(crash_line(outcome.crash))
        output.failure(crash_line(outcome.crash))
        return EXIT_FAILURE
    result = outcome.result
    assert result is not None
    if result.cancelled:
        console.error("interrupted")
        output.failure("interrupted", "error_interrupted")
        return EXIT_INTERRUPTED
    if result.status != "done":  # stopped at the model-call limit: what there is, and a failure
        if output_format == "text":
            output.answer(result.text)
        else:
            output.failure(result.text or f"stopped: {result.status}", "error_max_turns")
        return EXIT_FAILURE
    output.answer(result.text)
    return EXIT_OK


def _valid_text(value: str) -> str:
    """argv keeps bytes that are not UTF-8 as lone surrogates (PEP 383); the API and the transcript need UTF-8."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


if __name__ == "__main__":
    main()
