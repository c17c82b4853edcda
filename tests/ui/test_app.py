"""The app in-process against a fake agent: keys, the queue, slash commands, approvals, history.

prompt_toolkit reads a pipe instead of a terminal and writes to a real VT100 output over a
StringIO; what the app prints into the scrollback is captured beside it (`Run.printed`). Every wait
is for a condition, never a sleep.
"""

from __future__ import annotations

import asyncio
import io
import os
import re
import stat
import tempfile
import threading
from contextlib import asynccontextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output

from evo_agent.agent.events import Retrying, TextDelta, ThinkingDelta, ToolFinished, ToolStarted
from evo_agent.tools.approval import ApprovalDecision, ApprovalRequest
from evo_agent.ui.app import AgentApp
from evo_agent.ui.bridge import AgentLike
from evo_agent.ui.prompt_history import ProjectHistory, history_path

from .fakes import FakeAgent

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
ESC, ENTER, CTRL_C, CTRL_D, CTRL_J, TAB = "\x1b", "\r", "\x03", "\x04", "\n", "\t"
UP, DOWN, CTRL_O = "\x1b[A", "\x1b[B", "\x0f"


def menu(run) -> list[str]:
    """The question's menu as drawn: one string per row."""
    return "".join(text for _, text in run.app.questions.menu_text()).split("\n")


class Run:
    def __init__(self, app: AgentApp, pipe, task: asyncio.Task) -> None:
        self.app, self.pipe, self.task = app, pipe, task
        self.chunks: list[str] = []

    @property
    def printed(self) -> str:
        """Everything printed into the scrollback so far, without colours."""
        return ANSI.sub("", "".join(self.chunks))

    def type(self, text: str) -> None:
        self.pipe.send_text(text)

    async def until(self, predicate, timeout: float = 10.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            assert loop.time() < deadline, f"condition not reached; printed so far:\n{self.printed}"
            await asyncio.sleep(0.01)

    def status(self) -> str:
        return "".join(text for _, text in self.app._status_text())


@asynccontextmanager
async def running(agent, *, rows: int = 24, columns: int = 80, **kwargs):
    """The app running on a pipe; leaves it with Ctrl+D if the test did not."""
    with create_pipe_input() as pipe:
        output = Vt100_Output(io.StringIO(), lambda: Size(rows, columns), term="xterm")
        app = AgentApp(agent, input=pipe, output=output, **kwargs)
        run = None
        original = app.write

        def write(text: str) -> None:
            run.chunks.append(text)
            original(text)

        app.write = write  # type: ignore[method-assign]
        task = asyncio.ensure_future(app.run_async())
        run = Run(app, pipe, task)
        await run.until(lambda: app.app.is_running and app.loop is not None)
        try:
            yield run
        finally:
            if not task.done():
                app.leave(0)
            await asyncio.wait_for(task, 10)


def test_fake_agent_matches_protocol(tmp_path):
    assert isinstance(FakeAgent(tmp_path), AgentLike)


async def test_enter_sends_and_the_answer_is_printed_above_the_prompt(tmp_path):
    agent = FakeAgent(tmp_path, script=[TextDelta("Line one\nline two\n"), TextDelta("**done**")])
    async with running(agent) as run:
        run.type("hello" + ENTER)
        await run.until(lambda: agent.turns == ["hello"] and not run.app.running)
        assert "› hello" in run.printed
        assert "Line one\nline two\ndone" in run.printed  # single line breaks kept, markdown rendered
        assert "1,334 tokens" in run.status()


async def test_the_idle_status_line_shows_dollars_and_the_cache_share(tmp_path):
    from evo_agent.agent.usage import Usage

    agent = FakeAgent(tmp_path)
    agent.model = "claude-sonnet-4-5"
    agent.usage = Usage(input_tokens=1_000, output_tokens=100, cache_creation_input_tokens=2_000,
                        cache_read_input_tokens=8_000, model_calls=2)
    async with running(agent, columns=160) as run:
        assert "1,234 tokens · context 10% · $0.0144 · cache 73% (8.0k read, 2.0k written) · mode ask · session" in run.status()


async def test_the_status_line_says_when_bash_runs_in_the_sandbox(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent, columns=160) as run:
        assert "sandbox" not in run.status()
        agent.sandbox = object()  # --sandbox: a tools.sandbox.Sandbox
        run.app.app.invalidate()
        await run.until(lambda: " · sandbox · " in run.status())


async def test_ctrl_z_on_a_pipe_neither_stops_the_process_group_nor_types_a_control_character(tmp_path):
    """The app read from a pipe (no shell to bring it back): Ctrl+Z must not send SIGTSTP to the process group it
    shares with its caller (here pytest itself), nor put a literal ^Z into the prompt."""
    async with running(FakeAgent(tmp_path)) as run:
        run.type("ab\x1ac")
        await run.until(lambda: run.app.buffer.text == "abc")


async def test_ctrl_d_on_an_empty_prompt_quits_with_0_and_not_with_text(tmp_path):
    async with running(FakeAgent(tmp_path)) as run:
        run.type("abc" + CTRL_D)
        await run.until(lambda: run.app.buffer.text == "abc")
        assert not run.task.done()
        run.type("\x15" + CTRL_D)  # Ctrl+U empties the line, then Ctrl+D
        assert await asyncio.wait_for(run.task, 10) == 0


async def test_ctrl_c_twice_quits_with_130(tmp_path):
    async with running(FakeAgent(tmp_path)) as run:
        run.type(CTRL_C)
        await run.until(lambda: "Ctrl+C again" in run.status())
        run.type(CTRL_C)
        assert await asyncio.wait_for(run.task, 10) == 130


async def test_esc_interrupts_the_running_turn_and_says_so(tmp_path):
    agent = FakeAgent(tmp_path, script=[ToolStarted("t1", "bash", {"command": "sleep 30"})], block=True)
    async with running(agent) as run:
        run.type("wait" + ENTER)
        await run.until(lambda: "bash(sleep 30)" in run.status())
        run.type(ESC)
        await run.until(lambda: agent.cancelled.is_set() and not run.app.running)
        assert "└  interrupted" in run.printed and "Interrupted by user" in run.printed
        assert "error" not in run.printed


async def test_alt_enter_and_ctrl_j_insert_newlines(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        run.type("a" + ESC + ENTER + "b" + CTRL_J + "c" + ENTER)
        await run.until(lambda: agent.turns == ["a\nb\nc"])


async def test_a_prompt_sent_during_a_turn_is_queued_shown_and_sent_after(tmp_path):
    gate = threading.Event()
    agent = FakeAgent(tmp_path, gate=gate)
    async with running(agent) as run:
        run.type("first" + ENTER)
        await run.until(lambda: agent.started.is_set())
        run.type("second" + ENTER)
        await run.until(lambda: run.app.queue == ["second"])
        assert "second  (queued)" in "".join(t for _, t in run.app._queue_text())
        assert agent.turns == ["first"]
        gate.set()
        await run.until(lambda: agent.turns == ["first", "second"] and not run.app.running)
        assert run.printed.index("› first") < run.printed.index("› second")


async def test_tab_completes_slash_commands(tmp_path):
    async with running(FakeAgent(tmp_path)) as run:
        run.type("/cl" + TAB)
        await run.until(lambda: run.app.buffer.text == "/clear ")
        run.type("\x15/c")
        await run.until(lambda: run.app._completion_text() == "/clear  /compact  /cost")


async def test_slash_commands_help_cost_clear_unknown(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        for line in ("/help", "/cost", "/clear", "/nope"):
            run.type(line + ENTER)
        await run.until(lambda: "unknown command /nope" in run.printed)
        assert "/compact [FOCUS]" in run.printed and "Ctrl+D on an empty prompt quits" in run.printed
        assert "tokens: 1,234" in run.printed
        assert "Started new session 1780000088888_cccccccc" in run.printed and agent.cleared == 1
        assert agent.turns == []  # slash commands never reach the model


async def test_slash_mcp_shows_the_servers_and_reconnects_off_the_loop(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        run.type("/mcp" + ENTER)
        await run.until(lambda: "docs (user, stdio) — failed: it exited" in run.printed)
        run.type("/mcp reconnect docs" + ENTER)
        await run.until(lambda: "MCP server docs: connected" in run.printed)
        assert agent.reconnected == ["docs"] and agent.turns == []


async def test_resume_with_an_id_shows_the_restored_conversation(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        run.type("/resume 1780000000000_aaaaaaaa" + ENTER)
        await run.until(lambda: "messages restored" in run.printed)
        text = run.printed
        assert text.index("› restored question") < text.index("restored answer") < text.index("bash(ls)")
        assert "└  a.txt" in text
        assert ("Resumed 1780000000000_aaaaaaaa: 3 messages restored (new session 1780000099999_bbbbbbbb)"
                in " ".join(text.split()))  # a notice wraps between words at the app's width
        run.type("/resume nope" + ENTER)
        await run.until(lambda: "error: invalid session id 'nope'" in run.printed)


async def test_approval_answers_come_from_the_menu_with_a_reason_a_shortcut_and_esc(tmp_path):
    edit = ApprovalRequest("edit_file", "edit README.md", "--- a\n+++ b\n-old\n+new", reason="may write files",
                           rule="Edit(README.md)")
    agent = FakeAgent(tmp_path, script=[edit] * 4)
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        assert "? edit README.md  (may write files)" in run.printed and "+new" in run.printed
        assert "↑/↓ choose · Enter answers · Esc says no" in run.status()
        assert menu(run) == ["  Yes", "  Yes, and allow Edit(README.md) for this session",
                             "  Yes, and always allow Edit(README.md) in this project", "  No",
                             "  No, and tell the model why"]
        run.type(ENTER)  # nothing chosen yet: Enter answers nothing
        await run.until(lambda: "Choose an answer" in run.status())
        run.type(DOWN)
        await run.until(lambda: menu(run)[0] == "❯ Yes")
        run.type(ENTER)
        await run.until(lambda: len(agent.decisions) == 1 and run.app.questions.approval is not None)
        run.type(DOWN + UP)  # ↓ then ↑: round to the last row (↑ first is the prompt's history key)
        await run.until(lambda: run.app.questions.choice == 4)
        run.type(ENTER + "not now" + ENTER)
        await run.until(lambda: len(agent.decisions) == 2 and run.app.questions.approval is not None)
        run.type(DOWN + "p" + ENTER)  # a shortcut chooses its row once the menu was moved; Enter answers
        await run.until(lambda: len(agent.decisions) == 3 and run.app.questions.approval is not None)
        run.type(ESC)
        await run.until(lambda: len(agent.decisions) == 4 and not run.app.running)
        assert run.app.buffer.text == ""
    assert agent.decisions == [ApprovalDecision("yes"), ApprovalDecision("no", "not now"),
                               ApprovalDecision("always-project"), ApprovalDecision("no")]


async def test_typing_during_a_question_never_answers_it_and_stays_in_the_prompt(tmp_path):
    """SPEC §9: "please stop" once answered p (always, in this project); now it is text in the prompt box."""
    request = ApprovalRequest("bash", "run: rm -rf build", rule="Bash(rm -rf build)")
    agent = FakeAgent(tmp_path, script=[request])
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        for text in ("please stop", " yes", "\x1b[200~y\rpasted\x1b[201~"):
            run.type(text)
        run.type(ENTER + ENTER + "a")  # Enter in the prompt answers nothing and inserts nothing
        await run.until(lambda: run.app.buffer.text == "please stop yesy\npasteda")
        await run.until(lambda: "Answer the question first" in run.status())
        assert agent.decisions == [] and run.app.questions.approval is not None and "allowed" not in run.printed
        run.type(TAB + DOWN + DOWN + DOWN + DOWN)  # back to the question; down to "No"
        await run.until(lambda: run.app.questions.choice == 3)
        run.type(ENTER)
        await run.until(lambda: agent.decisions == [ApprovalDecision("no")] and not run.app.running)
        assert run.app.buffer.text == "please stop yesy\npasteda"  # still there, not sent, no stray newline
        assert agent.turns == ["go"]


async def test_a_long_command_shows_what_fits_says_what_is_hidden_and_yes_waits_for_ctrl_o(tmp_path):
    command = "\n".join(f"echo step {i:03d}" for i in range(1, 200)) + "\ntouch LAST-LINE-200"
    request = ApprovalRequest("bash", "run: echo step 001 …", command, rule="")
    agent = FakeAgent(tmp_path, script=[request])
    async with running(agent, rows=24) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        assert "echo step 001" in run.printed and "LAST-LINE-200" not in run.printed
        hidden = int(re.search(r"… (\d+) more lines not shown \(200 in all\): Ctrl\+O", run.printed).group(1))
        assert 200 - hidden == len(re.findall(r"^ +\d+ echo step", run.printed, re.M))  # shown or counted
        assert "Ctrl+O shows all" in run.status() and menu(run)[0] == "  Yes (after Ctrl+O)"
        run.type(DOWN + ENTER)
        await run.until(lambda: "not shown yet: Ctrl+O shows them" in run.status())
        run.type("y")  # nor a shortcut
        assert agent.decisions == [] and run.app.questions.approval is not None
        run.type(CTRL_O)
        await run.until(lambda: "touch LAST-LINE-200" in run.printed)
        assert all(f"echo step {i:03d}" in run.printed for i in range(1, 200))
        assert run.printed.rstrip().endswith("touch LAST-LINE-200")  # the last line is right above the menu
        run.type(ENTER)
        await run.until(lambda: agent.decisions == [ApprovalDecision("yes")])


async def test_a_yes_no_question_uses_the_same_menu(tmp_path):
    async with running(FakeAgent(tmp_path)) as run:
        answers: list[bool] = []
        thread = threading.Thread(target=lambda: answers.append(run.app.questions.ask_yes_no("Restore 2 files?")))
        thread.start()
        await run.until(lambda: run.app.questions.question is not None)
        run.type("n")  # text, not an answer
        await run.until(lambda: run.app.buffer.text == "n")
        run.type(TAB + DOWN + DOWN + ENTER)
        await run.until(lambda: answers == [False])
        thread.join(5)
        assert "? Restore 2 files?" in run.printed and "└  no" in run.printed and run.app.buffer.text == "n"


async def test_leaving_while_an_approval_waits_answers_no(tmp_path):
    request = ApprovalRequest("bash", "run: rm -rf build")
    agent = FakeAgent(tmp_path, script=[request])
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        run.app.leave(143)
        assert await asyncio.wait_for(run.task, 10) == 143
    assert run.app.worker_done.wait(5) and agent.decisions == [ApprovalDecision("no")]


async def test_tools_nested_subagent_calls_retry_notices_and_errors(tmp_path):
    agent = FakeAgent(tmp_path, script=[
        ThinkingDelta("let me think"),
        ToolStarted("t1", "task", {"description": "find the bug", "prompt": "..."}),
        ToolStarted("n1", "grep", {"pattern": "def main", "path": "src"}, depth=1, parent_id="t1"),
        ToolFinished("n1", "src/a.py:1:def main", False, 0.1, depth=1, parent_id="t1"),
        ToolFinished("t1", "The bug is in a.py", False, 1.0),
        ToolStarted("t2", "read_file", {"path": "nope"}),
        ToolFinished("t2", "no such file: nope", True, 0.0),
        Retrying("API overloaded (529), retrying in 4 s, attempt 2 of 5"),
    ], gate=threading.Event())
    async with running(agent) as run:
        run.type("go" + ENTER)
        await run.until(lambda: "no such file" in run.printed and "retrying" in run.status())
        assert "retrying in 4 s, attempt 2 of 5" in run.status()  # in the activity line, not printed
        assert "retrying" not in run.printed
        text = run.printed
        assert "✻ thinking (12 characters)" in text
        assert "● task(find the bug)" in text and '  ● grep("def main" in src)' in text
        assert "    └  src/a.py:1:def main" in text
        assert "└  error: no such file: nope" in text
        agent.gate.set()


async def test_initial_prompt_runs_at_start(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent, initial_prompt="fix the test") as run:
        await run.until(lambda: agent.turns == ["fix the test"] and not run.app.running)


async def test_prompt_history_is_kept_per_project_private_and_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    project = tmp_path / "project"
    project.mkdir()
    path = history_path(project)
    assert path.parent == tmp_path / "state" / "evo-agent" / "history"  # the user's state dir, not the project
    key = "sk-ant-" + "a1" * 20
    async with running(FakeAgent(project), history=ProjectHistory(path)) as run:
        run.type(f"use {key} please" + ENTER)
        await run.until(lambda: path.exists() and "please" in path.read_text())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert key not in path.read_text() and "[REDACTED:anthropic-key]" in path.read_text()
    assert os.listdir(project) == []  # nothing written into the project
    async with running(FakeAgent(project), history=ProjectHistory(path)) as run:
        run.type("\x1b[A")  # ↑ in a new run recalls the last prompt
        await run.until(lambda: run.app.buffer.text == "use [REDACTED:anthropic-key] please")


async def test_a_long_answer_leaves_the_prompt_in_a_small_live_region(tmp_path):
    lines = "".join(f"line {i}\n" for i in range(1, 81))
    agent = FakeAgent(tmp_path, script=[TextDelta(lines[: len(lines) // 2]), TextDelta(lines[len(lines) // 2:])],
                      gate=threading.Event())
    async with running(agent, rows=15, columns=60) as run:
        run.type("long" + ENTER)
        await run.until(lambda: "line 80" in run.app.view.stream.tail)  # one paragraph: live until it ends
        live = "".join(text for _, text in run.app._tail_text()).splitlines()
        assert len(live) <= run.app._max_tail_rows() and live[-1] == "line 80"  # its newest lines show
        agent.gate.set()
        await run.until(lambda: not run.app.running)
        assert all(f"line {i}\n" in run.printed for i in range(1, 81))


async def test_slash_resume_without_an_id_asks_the_picker_and_resumes_the_choice(tmp_path, monkeypatch):
    """The picker's API for a running loop (`ui.picker.pick_session`); a stand-in here, the real one in tmux."""
    import evo_agent.ui.picker as picker

    asked: list[Path] = []

    async def pick_session(project_dir, **kwargs):
        asked.append(Path(project_dir))
        return "1780000000000_aaaaaaaa"

    monkeypatch.setattr(picker, "pick_session", pick_session, raising=False)
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        run.type("/resume" + ENTER)
        await run.until(lambda: "messages restored" in run.printed)
        assert asked == [tmp_path] and agent.resumed == ["1780000000000_aaaaaaaa"]
        assert "› restored question" in run.printed


async def test_resuming_a_session_recorded_elsewhere_asks_first(tmp_path):
    """SPEC §9: a foreign session is resumed in the app only when the user confirms it."""
    from evo_agent.session.trust import ForeignSession

    class CarefulAgent(FakeAgent):
        def resume(self, session_id: str, *, confirm=None):  # noqa: ANN001, ANN202
            if confirm is None or not confirm(session_id, "tracked by git"):  # as agent/resuming.py asks
                raise ForeignSession(session_id, "tracked by git")
            return super().resume(session_id)

    agent = CarefulAgent(tmp_path)
    async with running(agent) as run:
        run.type("/resume 1780000000000_aaaaaaaa" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        assert "recorded elsewhere: tracked by git" in run.printed
        run.type(DOWN + UP + UP + ENTER)  # "No"
        await run.until(lambda: "error: session 1780000000000_aaaaaaaa was recorded elsewhere" in run.printed)
        assert agent.resumed == [] and "sessions adopt 1780000000000_aaaaaaaa" in run.printed
        run.type("/resume 1780000000000_aaaaaaaa" + ENTER)
        await run.until(lambda: run.app.questions.approval is not None)
        run.type(DOWN + ENTER)
        await run.until(lambda: "messages restored" in run.printed)
        assert agent.resumed == ["1780000000000_aaaaaaaa"]


async def test_a_prompt_starting_with_a_path_goes_to_the_model(tmp_path):
    agent = FakeAgent(tmp_path)
    async with running(agent) as run:
        run.type("/tmp/err.log what is this?" + ENTER)
        await run.until(lambda: agent.turns == ["/tmp/err.log what is this?"] and not run.app.running)
        run.type(" /nope" + ENTER)
        await run.until(lambda: len(agent.turns) == 2 and not run.app.running)
        assert "unknown command" not in run.printed


_typed = st.text(alphabet=st.sampled_from(list("ynapqYNAP sto!.,0123456789") + ["\r", "é", "\u202e"]), min_size=1,
                 max_size=25)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typed=_typed)
def test_no_typed_text_ever_answers_a_question(typed):
    """Whatever is typed (letters of every answer, Enter among them) lands in the prompt box; nothing answers."""
    request = ApprovalRequest("bash", "run: touch x", rule="Bash(touch x)")

    async def scenario() -> None:
        with tempfile.TemporaryDirectory() as tmp:
            agent = FakeAgent(Path(tmp), script=[request])
            async with running(agent) as run:
                run.type("go" + ENTER)
                await run.until(lambda: run.app.questions.approval is not None)
                run.type(typed + CTRL_O)  # Ctrl+O: a key the app reads after all of the text
                expected = typed.replace("\r", "")
                await run.until(lambda: run.app.buffer.text == expected)
                assert agent.decisions == [] and run.app.questions.approval is not None and run.app.questions.choice is None
                run.type(CTRL_C)  # a deliberate no
                await run.until(lambda: agent.decisions == [ApprovalDecision("no")])

    asyncio.run(scenario())


async def test_ctrl_o_expands_the_result_that_says_so_whole_even_after_its_subagent_ended(tmp_path):
    long_output = "\n".join(f"nested line {i}" for i in range(1, 3001))
    agent = FakeAgent(tmp_path, script=[
        ToolStarted("t1", "task", {"description": "look", "prompt": "look around"}),
        ToolStarted("n1", "bash", {"command": "seq 3000"}, depth=1, parent_id="t1"),
        ToolFinished("n1", long_output, False, 0.1, depth=1, parent_id="t1"),
        ToolFinished("t1", "Looked around.", False, 1.0),
    ])
    async with running(agent, rows=24) as run:
        run.type("go" + ENTER)
        await run.until(lambda: "Looked around." in run.printed and not run.app.running)
        assert "(Ctrl+O shows all)" in run.printed and "nested line 3000" not in run.printed
        run.type(CTRL_O)
        await run.until(lambda: "nested line 3000" in run.printed)  # every line: no 2,000-line cap
        assert "seq 3000" in run.printed.split("Looked around.")[-1]  # the nested call, not the task


async def test_init_is_a_turn_shown_as_init_and_the_welcome_names_the_instructions(tmp_path):
    from evo_agent.agent.instructions import Instructions, Source

    agent = FakeAgent(tmp_path)
    agent.instructions = Instructions("pkg/web", (Source("AGENTS.md", "0" * 64, 10, "project", 10),), "text")
    async with running(agent) as run:
        run.app.print_welcome()  # what `run()` prints before the event loop starts
        await run.until(lambda: "working directory: pkg/web · instructions: AGENTS.md" in run.printed)
        run.type("/init" + ENTER)
        await run.until(lambda: len(agent.turns) == 1)
        assert agent.turns[0].startswith("Survey this project and write its AGENTS.md")
        assert str(tmp_path / "AGENTS.md") in agent.turns[0]
        assert "Survey this project" not in run.printed  # the scrollback shows what was typed: /init
        await run.until(lambda: "/init" in run.printed)
