"""What starting costs: the modules each entry point loads (the speed itself is in benchmarks/startup.py).

Importing the SDKs took 1.5–3 s, Textual and asyncio tens of milliseconds; none of them may creep
back onto the `-p` path, and `--help` must not load the session library or the providers.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.builders import seed_session
from tests.cli_runner import Cli

_DRIVER = """
import json, sys
from evo_agent.cli.main import run
try:
    code = run(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""

NEVER_ON_THE_PRINT_PATH = ("anthropic", "openai", "httpx", "httpx2", "pydantic", "textual", "rich", "markdown_it",
                           "asyncio", "prompt_toolkit", "importlib.metadata", "evo_agent.ui.app",
                           # the shell analysis: loaded by the first bash call's permission check, not before
                           "evo_agent.tools.shell_readonly", "evo_agent.tools.shell_words", "evo_agent.tools.shell_allowlist")


def loaded(cli, tmp_path, *args: str) -> tuple[int, set[str]]:
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", _DRIVER, str(out), *args], cwd=cli.project, env=cli.env,
                   capture_output=True, text=True, timeout=60, input="")
    data = json.loads(out.read_text())
    return data["code"], set(data["modules"])


def test_print_mode_loads_no_sdk_no_ui_and_no_asyncio(cli, model_server, tmp_path):
    code, modules = loaded(cli, tmp_path, "-p", "hi")
    assert code == 0 and len(model_server.requests) == 1
    assert "evo_agent.providers.anthropic_provider" in modules
    assert not [m for m in modules if m.split(".")[0] in NEVER_ON_THE_PRINT_PATH or m in NEVER_ON_THE_PRINT_PATH]


def test_resuming_in_print_mode_loads_no_sdk_no_ui_and_no_asyncio(cli, model_server, tmp_path):
    sid = seed_session(cli.project, ("first", "one"), ("second", "two"))
    code, modules = loaded(cli, tmp_path, "--resume", sid, "-p", "third")
    assert code == 0 and len(model_server.requests[-1]["messages"]) == 5
    assert not [m for m in modules if m.split(".")[0] in NEVER_ON_THE_PRINT_PATH or m in NEVER_ON_THE_PRINT_PATH]


def test_help_loads_neither_the_session_library_nor_a_provider(cli, tmp_path):
    code, modules = loaded(cli, tmp_path, "--help")
    assert code == 0
    assert not [m for m in modules if m.startswith(("evo_agent.session", "evo_agent.providers", "evo_agent.agent"))]


def test_sessions_list_loads_no_provider(cli, tmp_path):
    seed_session(cli.project, ("hello", "hi"))
    code, modules = loaded(cli, tmp_path, "sessions", "list")
    assert code == 0
    assert not [m for m in modules if m.startswith(("evo_agent.providers.", "evo_agent.agent", "asyncio"))]
    # dataclasses (and the inspect it loads) were a sixth of listing 10,000 sessions (docs/benchmarks.md):
    # the listing's records are plain classes
    assert not modules & {"dataclasses", "inspect", "evo_agent.session.workspace"}


_ENTRY_DRIVER = """
import json, sys
out, sys.argv = sys.argv[1], ["evo-agent", *sys.argv[2:]]
from evo_agent.cli.entry import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def test_a_plain_sessions_list_is_read_without_argparse(cli, tmp_path):
    """The console script's entry reads `sessions list --limit N` itself (tests/cli/test_list_fast_path.py)."""
    seed_session(cli.project, ("hello", "hi"))
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", _ENTRY_DRIVER, str(out), "sessions", "list", "--limit", "5"],
                   cwd=cli.project, env=cli.env, capture_output=True, text=True, timeout=60, input="")
    data = json.loads(out.read_text())
    assert data["code"] == 0
    assert not set(data["modules"]) & {"argparse", "evo_agent.cli.main", "shutil", "gettext"}


def test_a_plain_sessions_list_outside_a_repository_loads_neither_signal_threading_datetime_nor_typing(cli, tmp_path):
    """signal (its enums), threading, datetime and typing were a tenth of listing 10,000 sessions (docs/benchmarks.md):
    exit codes are plain ints, the writer's locks come from _thread, dates are formatted through time, the row
    types are session/plaindata.py's classes (typing only for checkers); shlex and the JSON escapes load only for the worktrees and --json,
    contextlib where a context manager is made from a generator (not on this path).
    (Inside a repository git runs, and subprocess loads signal and threading.)"""
    plain = tmp_path / "plain"
    plain.mkdir()
    seed_session(plain, ("hello", "hi"))
    out = tmp_path / "modules.json"
    for limit in (["--limit", "5"], []):
        subprocess.run([sys.executable, "-c", _ENTRY_DRIVER, str(out), "sessions", "list", *limit],
                       cwd=plain, env=cli.env, capture_output=True, text=True, timeout=60, input="")
        data = json.loads(out.read_text())
        assert data["code"] == 0
        assert not set(data["modules"]) & {"signal", "threading", "datetime", "typing", "subprocess", "argparse",
                                           "shlex", "evo_agent.cli.trust", "contextlib"}
        if limit:  # newest(): a few metas read, the listing index never
            assert "evo_agent.session.list_index" not in data["modules"]


def test_sessions_list_outside_a_repository_does_not_load_subprocess(cli, tmp_path):
    """Only git needs subprocess (a tenth of listing 10,000 sessions), and outside a repository git never runs."""
    plain = tmp_path / "plain"
    plain.mkdir()
    seed_session(plain, ("hello", "hi"))
    code, modules = loaded(Cli(plain, cli.env), tmp_path, "sessions", "list")
    assert code == 0
    assert not modules & {"subprocess", "dataclasses", "inspect"}


# What a new session's `-p` does without: the REPL and its slash-command table, the trust checks of a
# resume, the `sessions` subcommands, the UI, the settings writer's tempfile and the approval diff.
NOT_ON_A_NEW_SESSIONS_PRINT_PATH = ("evo_agent.cli.repl", "evo_agent.cli.trust", "evo_agent.cli.sessions",
                                    "evo_agent.ui", "evo_agent.session.search", "tempfile", "difflib")


def test_a_new_sessions_print_mode_loads_only_what_it_uses(cli, model_server, tmp_path):
    code, modules = loaded(cli, tmp_path, "-p", "hi")
    assert code == 0 and len(model_server.requests) == 1
    assert not [m for m in modules if m.startswith(NOT_ON_A_NEW_SESSIONS_PRINT_PATH)]


_AT_THE_REQUEST_DRIVER = """
import json, os, sys
out, sys.argv = sys.argv[1], ["evo-agent", *sys.argv[2:]]
import evo_agent.providers.wire as wire
send = wire.Connection.request
def request(self, *args, **kwargs):
    send(self, *args, **kwargs)
    if not os.path.exists(out):
        names = [*vars(sys.modules["evo_agent.session.layout"]), *vars(sys.modules["evo_agent.session.ids"])]
        with open(out, "w") as f:
            json.dump({"modules": sorted(sys.modules), "patterns": sorted(n for n in names if n.endswith("_RE"))}, f)
wire.Connection.request = request
from evo_agent.cli.entry import main
main()
"""

# What a new session's `-p hi` has not imported when its first request is on the wire (issue #30: ≤ 0.5× the
# native Codex binary): each was measured on that path. orjson (with the dataclasses, inspect, uuid and platform
# it loads) is imported once the request is sent; records and the request are written in its bytes before.
NOT_BEFORE_THE_FIRST_REQUEST = ("argparse", "evo_agent.cli.parser", "gettext", "shutil", "dataclasses", "inspect",
                                "orjson", "uuid", "platform", "hashlib", "_hashlib", "subprocess", "random",
                                "evo_agent.tools.mcp_config", "evo_agent.tools.mcp_client",
                                # prctl is called through _ctypes (cli/main.py's keep_secrets_from_tools)
                                "ctypes",
                                # ~12 M instructions: names from typing are imported for the type checker only
                                # (`TYPE_CHECKING = False`), Protocols are plain classes at run time
                                "typing",
                                # records are stamped through time (session/recorder.py), their instants kept; a
                                # stream's events go through _queue's SimpleQueue (providers/pump.py)
                                "datetime", "queue",
                                # the handlers are installed through _signal (cli/runtime.py's Signals.install)
                                "signal",
                                # plain HTTP on _socket's socket (providers/wire.py): socket with its selectors
                                # and enums (~14 M instructions) only for TLS or a proxy's tunnel
                                "socket", "selectors",
                                # the session library's lock holders are plain_contextmanager's (session/plaincontext.py)
                                "contextlib",
                                # a new session reads no transcript: summary_message lives in session/messages.py, the
                                # loop imports FileHistory at the first file tool, `newest` imports heapq
                                "evo_agent.session.resume", "evo_agent.session.repair",
                                "evo_agent.session.file_history", "heapq",
                                # after a model call: the price table (agent/usage.py), the answer's assembler
                                # (providers/anthropic_provider.py makes it at the first event)
                                "evo_agent.agent.pricing", "evo_agent.providers.anthropic_stream",
                                # what the bash, glob and grep tools need only when they run
                                "select", "evo_agent.tools.reaper", "evo_agent.tools.tool_env", "evo_agent.tools.ignore",
                                # the parser's help texts (print mode's output never needed them)
                                "evo_agent.cli.help_text",
                                # without MCP servers: their tools' module and the kept tool list's reader and writer
                                "evo_agent.tools.mcp_tools", "evo_agent.session.tool_defs",
                                # the session library's lazy names and the provider registry import through
                                # __import__ (importlib's package is ~0.5 M instructions)
                                "importlib")


def test_a_new_sessions_first_request_is_sent_before_the_heavy_imports(cli, model_server, tmp_path):
    out = tmp_path / "at-request.json"
    done = subprocess.run([sys.executable, "-c", _AT_THE_REQUEST_DRIVER, str(out), "-p", "hi"], cwd=cli.project,
                          env=cli.env, capture_output=True, text=True, timeout=60, input="")
    assert done.returncode == 0 and len(model_server.requests) == 1, done.stderr
    seen = json.loads(out.read_text())
    modules = set(seen["modules"])
    assert "evo_agent.providers.anthropic_provider" in modules
    assert not modules & set(NOT_BEFORE_THE_FIRST_REQUEST)
    # the plan's and memory's name patterns (~1.6 M instructions) are compiled when a file is there to match,
    # the session id's when an id is
    assert not {"PLAN_ID_RE", "TASK_FILE_RE", "MEMORY_TOPIC_RE", "SESSION_ID_RE"} & set(seen["patterns"])


def test_the_apps_first_screen_needs_no_markdown_renderer():
    """rich.markdown, markdown-it and Pygments (~55 ms) load at the first answer, not before the first paint."""
    code = "import sys, evo_agent.ui.app; print(sorted(m for m in sys.modules if m.startswith(" \
           "('rich.markdown', 'rich.syntax', 'markdown_it', 'pygments'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
