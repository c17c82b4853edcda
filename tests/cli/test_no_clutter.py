"""No clutter: resumes with nothing new and starts the API refused are not listed, and the exit hint names
the session that holds the conversation."""

from __future__ import annotations

import json

from tests.cli_runner import HINT_RE
from tests.fake_model_server import error, text


def listed(cli, *flags: str) -> list[str]:
    result = cli.run("sessions", "list", "--json", *flags)
    assert result.rc == 0, result.err
    return [row["id"] for row in json.loads(result.out)]


def test_resume_then_exit_is_not_listed_and_the_hint_names_the_source(cli, model_server):
    model_server.script(text("the answer"))
    first = cli.run("-p", "a question")
    source = first.hint_id()

    for args in (("--resume", source), ("-c",), ("-c",)):
        quiet = cli.run("--plain", *args, input="")  # resume, say nothing, EOF
        assert quiet.rc == 0, quiet.err
        assert quiet.hint_id() == source  # not the empty copy: pasting the hint gets the conversation back
    assert len(cli.session_ids()) == 4
    assert listed(cli) == [source]  # one row, not four look-alikes
    assert len(listed(cli, "--all")) == 4

    switched = cli.run("--plain", input=f"/resume {source}\n")  # /resume of a session, nothing said after it
    assert switched.hint_id() == source
    assert listed(cli) == [source]

    pruned = cli.run("sessions", "prune", "--yes")
    # 4: the three quiet resumes and the /resume copy (the launch before /resume wrote nothing)
    assert pruned.rc == 0 and pruned.out_lines[-1].startswith("deleted 4 sessions"), pruned.out
    assert cli.session_ids() == [source]


def test_a_start_the_api_refused_is_not_listed_but_keeps_its_prompt(cli, model_server):
    model_server.script(text("kept"))
    kept = cli.run("-p", "worth keeping").hint_id()
    model_server.script(error(401, "authentication_error", "invalid x-api-key"))
    refused = cli.run("-p", "never answered")
    assert refused.rc == 1
    refused_id = refused.hint_id()  # the session holds the prompt: resuming it keeps it
    assert refused_id != kept and listed(cli) == [kept]
    latest = cli.run("-c", "--plain", input="")  # -c skips it too
    assert latest.hint_id() == kept

    dry = cli.run("sessions", "prune", "--dry-run")
    assert any(refused_id in line for line in dry.out_lines) and not any(kept in line for line in dry.out_lines)
    assert cli.run("sessions", "prune", "--yes").rc == 0
    assert cli.session_ids() == [kept]


def test_clear_with_nothing_said_names_the_previous_session(cli, model_server):
    model_server.script(text("hi there"))
    repl = cli.run("--plain", input="hello\n/clear\n")
    assert repl.rc == 0, repl.err
    first = repl.hint_id()
    assert cli.messages(first)[0] == {"role": "user", "content": "hello"}
    at = next(i for i, line in enumerate(repl.out_lines) if line.startswith("Started new session"))
    assert repl.out_lines[at].endswith("the previous one resumes with:")
    assert repl.out_lines[at + 1] == f"  evo-agent --resume {first}"
    assert listed(cli) == [first]

    model_server.script(text("new topic answer"))
    both = cli.run("--plain", input="hello again\n/clear\nnew topic\n")
    second = both.hint_id()
    assert second not in (first,) and HINT_RE.match(both.err_lines[-1])
    assert cli.messages(second)[0] == {"role": "user", "content": "new topic"}


def test_prune_asks_and_refuses_without_a_terminal(cli, model_server):
    model_server.script(text("x"))
    source = cli.run("-p", "q").hint_id()
    cli.run("--resume", source, "--plain", input="")
    refused = cli.run("sessions", "prune")  # stdin is a pipe: nobody to ask
    assert refused.rc == 1 and refused.err_lines == [
        "evo-agent: prune would delete 1 session; nothing deleted: no terminal to ask on "
        "(pass --yes to delete without asking, --dry-run to see the list)"]
    assert len(cli.session_ids()) == 2


def test_prune_asks_on_a_terminal_and_deletes_only_after_yes(cli, model_server):
    import os
    import pty
    import subprocess

    from tests.cli_runner import COMMAND

    model_server.script(text("x"))
    source = cli.run("-p", "q").hint_id()
    copy = cli.run("--resume", source, "--plain", input="")
    assert copy.rc == 0
    (copy_id,) = [s for s in cli.session_ids() if s != source]

    def prune_answering(answer: str) -> subprocess.CompletedProcess:
        master, slave = pty.openpty()
        try:
            proc = subprocess.Popen([*COMMAND, "sessions", "prune"], cwd=cli.project, env=cli.env, stdin=slave,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            os.write(master, answer.encode() + b"\n")
            out, err = proc.communicate(timeout=60)
        finally:
            os.close(slave)
            os.close(master)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    declined = prune_answering("n")
    assert declined.returncode == 1 and "Delete 1 session? This cannot be undone. [y/N]" in declined.stderr
    assert copy_id in declined.stderr and len(cli.session_ids()) == 2
    accepted = prune_answering("y")
    assert accepted.returncode == 0 and accepted.stdout.splitlines()[-1].startswith("deleted 1 session")
    assert cli.session_ids() == [source]
