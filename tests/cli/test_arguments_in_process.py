"""Arguments and exit codes, checked in-process (`cli_main`: main(argv) with captured streams).

A usage mistake is one line on stderr starting `evo-agent: `, nothing on stdout, exit 2; a name that
does not resolve (a bad or unknown session id) is exit 1; nothing is created on the way. These run
without starting an interpreter; the end-to-end twins that drive the real console script are in
test_errors.py, and the first test here holds the two runners to the same answer.
"""

from __future__ import annotations

import pytest

from tests.cli_runner import Result


def assert_one_line(result: Result, rc: int, needle: str) -> None:
    assert result.rc == rc, (result.rc, result.err)
    assert result.out == ""
    assert len(result.err_lines) == 1, result.err
    assert result.err_lines[0].startswith("evo-agent: ") and needle in result.err, result.err
    assert "Traceback" not in result.err


def test_the_in_process_runner_answers_as_the_console_script_does(cli_main, demo_cli):
    for args in (["--bogus"], ["sessions", "show", "nope"]):
        assert cli_main.run(*args) == demo_cli.run(*args)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--bogus"], "unrecognized arguments: --bogus (see evo-agent --help)"),
        (["--print", "hi", "--output-format", "yaml"], "invalid choice"),
        (["sessions", "list", "--bogus"], "(see evo-agent sessions list --help)"),
        (["sessions", "bogus"], "invalid choice: 'bogus'"),
    ],
    ids=["unknown-flag", "bad-choice", "unknown-subcommand-flag", "unknown-subcommand"],
)
def test_bad_flags_and_unknown_subcommands_exit_2_naming_the_help_to_read(cli_main, args, needle):
    assert_one_line(cli_main.run(*args), 2, needle)
    assert not (cli_main.project / ".evo-agent").exists()


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--resume", "1780227556183", "--continue"], "--resume and --continue cannot be used together"),
        (["-p", "hi", "--plain"], "--plain is for interactive mode"),
        (["--resume", "-p", "hi"], "--resume needs a session id"),
        (["-p", "  "], "prompt is empty"),
    ],
    ids=["resume-and-continue", "print-and-plain", "resume-without-id", "empty-prompt"],
)
def test_conflicting_or_incomplete_flags_exit_2_before_anything_is_created(cli_main, args, needle):
    assert_one_line(cli_main.run(*args), 2, needle)
    assert not (cli_main.project / ".evo-agent").exists()


@pytest.mark.parametrize("bad", ["../x", "1780227556183_deadbeef", "/etc/passwd", "1" * 300])
@pytest.mark.parametrize("command", [["--resume", "{}", "-p", "hi"], ["sessions", "show", "{}"]], ids=["resume", "show"])
def test_a_bad_or_unknown_session_id_exits_1_with_one_line(cli_main, command, bad):
    result = cli_main.run(*[bad if word == "{}" else word for word in command])
    assert_one_line(result, 1, "session")
    assert bad[:20] in result.err
    assert not (cli_main.project / ".evo-agent").exists()


def test_help_and_version_exit_0_on_stdout(cli_main):
    version = cli_main.run("--version")
    assert (version.rc, version.err) == (0, "") and version.out.startswith("evo-agent ")
    usage = cli_main.run("--help")
    assert (usage.rc, usage.err) == (0, "") and usage.out.startswith("usage: evo-agent")
