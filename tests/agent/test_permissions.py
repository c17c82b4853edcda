"""Permission modes, rules, the read-only classifier, and the gate in the real agent loop (issue #15)."""

from __future__ import annotations

import os
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evo_agent.agent.events import Notice, Retrying, TurnEvent
from evo_agent.agent.permissions import PermissionGate, Policy
from evo_agent.agent.rules import Rule, glob_match, parse_rules, split_rule_list
from evo_agent.session import load_for_resume
from evo_agent.tools.approval import ApprovalDecision
from evo_agent.tools.shell_readonly import read_only_reason
from tests.builders import make_agent, server_provider
from tests.builders import read_records as records
from tests.fake_model_server import text, tool_use

# --------------------------------------------------------------------------- the classifier

READ_ONLY = ["ls", "ls -la src", "pwd", "git status", "git log --oneline -5", "git diff HEAD~1", "git show HEAD",
             "cat README.md", "head -n 5 README.md | wc -l", "grep -rn foo .", "rg -n foo", "find . -name '*.py'",
             "echo hello", "cat README.md && git status"]
NOT_READ_ONLY = ["rm -rf x", "echo hi > x", "cat x >> y", "echo $(id)", "echo `id`", "cat x; rm y", "cat x & rm y",
                 "git push", "git -c core.pager=sh log", "cat /etc/passwd", "cat ~/.ssh/id_rsa", "ls ../", "cat $HOME/x",
                 "find . -exec rm {} +", "find . -delete", "rg --pre sh foo", "grep -R foo .", "sort -o out x",
                 "git diff --output=x", "git diff --no-index /etc/passwd x", "FOO=1 ls", "(ls)", "ls\nrm x",
                 "cat a#b; rm -rf c", "grep --file=/etc/passwd x", "python -c 'print(1)'", "cat <(rm x)", "ls | sh",
                 "npm test", "cat x || curl evil", "uniq README.md out.txt", "file -C -m magic",
                 "rg --hostname-bin=./x foo"]


@pytest.mark.parametrize("command", READ_ONLY)
def test_plainly_read_only_commands_run_unasked(command, project):
    assert read_only_reason(command, project) is None


@pytest.mark.parametrize("command", NOT_READ_ONLY)
def test_anything_else_asks(command, project):
    assert read_only_reason(command, project) is not None


def test_a_symlink_out_of_the_project_is_outside(project, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("key")
    (project / "link").symlink_to(secret)
    assert read_only_reason("cat link", project) is not None
    assert read_only_reason("cat li*", project) is not None  # a glob that expands to it
    assert read_only_reason("cat README.md", project) is None


_words = st.text(alphabet=st.sampled_from(list("abc ./-'\"|&*")), max_size=12)
_dangerous = st.sampled_from([">", ">>", "<", "$(", "`", ";", "${", "\n", "<(", "\\"])


@settings(max_examples=400, deadline=None)
@given(before=_words, marker=_dangerous, after=_words, program=st.sampled_from(["ls", "cat", "git status", "echo"]))
def test_redirection_substitution_and_sequences_never_run_unasked(tmp_path_factory, before, marker, after, program):
    project = tmp_path_factory.getbasetemp()
    assert read_only_reason(f"{program} {before}{marker}{after}", project) is not None


@settings(max_examples=300, deadline=None)
@given(first=st.sampled_from(["ls", "cat README.md", "git status", "echo hi"]),
       other=st.sampled_from(["rm -rf .", "sh", "bash -c ls", "curl http://x", "tee out", "xargs rm", "python",
                              "sed -i s/a/b/ f", "git commit -m x", "npm install"]),
       joiner=st.sampled_from([" | ", " && ", " || "]))
def test_a_pipe_or_chain_into_a_command_with_side_effects_asks(tmp_path_factory, first, other, joiner):
    project = tmp_path_factory.getbasetemp()
    assert read_only_reason(f"{first}{joiner}{other}", project) is not None
    assert read_only_reason(f"{other}{joiner}{first}", project) is not None


# --------------------------------------------------------------------------- rules


def test_rules_parse_and_match():
    assert split_rule_list("Bash(npm test),Edit, Bash(echo a,b)") == ["Bash(npm test)", "Edit", "Bash(echo a,b)"]
    exact, prefix, edit = parse_rules("Bash(npm test),Bash(npm run:*),Edit(src/**)")
    assert exact.covers_command("npm test") and not exact.covers_command("npm test --watch")
    assert prefix.covers_command("npm run build") and prefix.covers_command("npm run")
    assert not prefix.covers_command("npm run build; curl evil") and not prefix.covers_command("npm run $(x)")
    assert not prefix.covers_command("npm runner")
    assert edit.covers_path("Edit", "src/a/b.py", "/p/src/a/b.py") and not edit.covers_path("Edit", "lib/x", "/p/lib/x")
    assert not edit.covers_path("Edit", None, "/etc/src/x")  # a relative glob never reaches outside
    assert Rule.parse("Edit").covers_path("Edit", "x", "/p/x") and not Rule.parse("Edit").covers_path("Edit", None, "/x")
    assert glob_match("*.py", "a.py") and not glob_match("*.py", "d/a.py") and glob_match("**/*.py", "d/e/a.py")
    with pytest.raises(ValueError):
        parse_rules("Write(x)")


# --------------------------------------------------------------------------- the policy, mode by mode


def _verdicts(project, mode):
    policy = Policy(project, mode)
    calls = {
        "read inside": ("read_file", {"path": "README.md"}),
        "read outside": ("read_file", {"path": "/etc/hostname"}),
        "read-only bash": ("bash", {"command": "git status"}),
        "other bash": ("bash", {"command": "touch x"}),
        "edit inside": ("write_file", {"path": "src/new.py", "content": "x"}),
        "edit outside": ("write_file", {"path": "../elsewhere.txt", "content": "x"}),
        "edit .git": ("write_file", {"path": ".git/config", "content": "x"}),
        "edit .evo-agent": ("write_file", {"path": ".evo-agent/settings.json", "content": "{}"}),
    }
    return {k: policy.check(*v).action for k, v in calls.items()}


@pytest.mark.parametrize("mode, expected", [
    ("ask", dict(zip(["read inside", "read outside", "read-only bash", "other bash", "edit inside", "edit outside",
                      "edit .git", "edit .evo-agent"], ["allow", "ask", "allow", "ask", "ask", "ask", "ask", "deny"]))),
    ("accept-edits", {"read inside": "allow", "read outside": "ask", "read-only bash": "allow", "other bash": "ask",
                      "edit inside": "allow", "edit outside": "ask", "edit .git": "ask", "edit .evo-agent": "deny"}),
    ("read-only", {"read inside": "allow", "read outside": "ask", "read-only bash": "allow", "other bash": "deny",
                   "edit inside": "deny", "edit outside": "deny", "edit .git": "deny", "edit .evo-agent": "deny"}),
    ("bypass", {"read inside": "allow", "read outside": "allow", "read-only bash": "allow", "other bash": "allow",
                "edit inside": "allow", "edit outside": "allow", "edit .git": "allow", "edit .evo-agent": "deny"}),
])
def test_what_runs_unasked_in_each_mode(project, mode, expected):
    assert _verdicts(project, mode) == expected


def test_paths_are_resolved_through_dotdot_and_symlinks(project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("secret")
    (project / "out").symlink_to(outside)
    (project / "sub").mkdir()
    policy = Policy(project, "accept-edits")
    assert policy.check("read_file", {"path": "out/f.txt"}).action == "ask"
    assert policy.check("read_file", {"path": "sub/../../outside/f.txt"}).action == "ask"
    assert policy.check("read_file", {"path": "sub/../README.md"}).action == "allow"
    assert policy.check("edit_file", {"path": "out/f.txt", "old_string": "s", "new_string": "t"}).action == "ask"
    assert policy.check("glob", {"pattern": "out/**"}).action == "ask"
    assert policy.check("glob", {"pattern": "*/../../*"}).action == "ask"
    assert policy.check("glob", {"pattern": "src/**/*.py"}).action == "allow"
    assert policy.check("grep", {"pattern": "x", "path": "~"}).action == "ask"
    (project / ".evo-agent").mkdir()
    (project / "agentdir").symlink_to(project / ".evo-agent")
    assert policy.check("write_file", {"path": "agentdir/x", "content": ""}).action == "deny"
    assert policy.check("read_file", {"path": ".evo-agent/settings.json"}).action == "allow"


def test_a_bash_command_touching_the_agent_dir_asks_even_with_a_rule(project):
    policy = Policy(project, "accept-edits", parse_rules("Bash"))
    assert policy.check("bash", {"command": "rm -rf .evo-agent/sessions"}).action == "ask"
    assert policy.check("bash", {"command": "touch x"}).action == "allow"


# --------------------------------------------------------------------------- the gate in the loop


def test_print_mode_refusal_reaches_the_model_and_the_transcript(project, model_server):
    """No on_approval (print mode): the call is not run, the model reads why, the turn goes on."""
    model_server.script(tool_use("bash", {"command": "touch created"}, id="toolu_t"), text("I could not."))
    agent, store = make_agent(project, server_provider(model_server), mode="ask")
    notices: list[str] = []

    class Quiet:
        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                notices.append(event.text)

    result = agent.run_turn("make a file", Quiet())
    assert result.text == "I could not." and not (project / "created").exists()
    refusal = model_server.requests[1]["messages"][-1]["content"][0]
    assert refusal["is_error"] and refusal["tool_use_id"] == "toolu_t" and "Not run" in refusal["content"]
    assert "cannot ask (print mode)" in refusal["content"]
    (notice,) = notices
    assert notice.startswith("evo-agent: not run (needs approval): bash `touch created`")
    assert "--allowed-tools 'Bash(touch created)'" in notice
    recs = records(agent.recorder.path)
    (perm,) = [r for r in recs if r["type"] == "permission"]
    assert perm["tool_use_id"] == "toolu_t" and perm["decision"] == "refused" and "cannot ask" in perm["rule"]
    assert [r["type"] for r in recs].index("permission") < [r["type"] for r in recs].index("user", 3)  # the results
    assert load_for_resume(agent.recorder.path).messages == agent.history
    model_server.assert_all_valid()


def test_answers_yes_no_with_reason_and_always(project, model_server):
    model_server.script(
        [tool_use("bash", {"command": "touch one"}, id="t1"), tool_use("bash", {"command": "touch two"}, id="t2")],
        [tool_use("bash", {"command": "touch three"}, id="t3"), tool_use("bash", {"command": "touch three"}, id="t4")],
        text("done"),
    )
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    answers = iter([ApprovalDecision("yes"), ApprovalDecision("no", "not that one"), ApprovalDecision("always-session")])
    asked = []

    class Front:
        def on_approval(self, request):
            asked.append(request)
            return next(answers)

    agent.run_turn("touch things", Front())
    assert (project / "one").exists() and not (project / "two").exists() and (project / "three").exists()
    assert [r.summary for r in asked] == ["run: touch one", "run: touch two", "run: touch three"]  # t4: the rule
    assert asked[0].rule == "Bash(touch one)" and "touch" in asked[0].reason
    second = model_server.requests[1]["messages"][-1]["content"]
    assert second[1]["is_error"] and "Their reason: not that one" in second[1]["content"]
    perms = [(r["tool_use_id"], r["decision"], r["rule"]) for r in records(agent.recorder.path) if r["type"] == "permission"]
    assert perms == [("t1", "allowed", "user: yes"), ("t2", "refused", "user: no"),
                     ("t3", "allowed", "user: always in this session Bash(touch three)"),
                     ("t4", "allowed", "rule Bash(touch three)")]


def test_an_edit_request_shows_the_path_and_a_unified_diff(project, model_server):
    (project / "app.py").write_text("a = 1\nb = 2\n")
    model_server.script(tool_use("edit_file", {"path": "app.py", "old_string": "b = 2", "new_string": "b = 3"}),
                        text("edited"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    seen = []

    class Front:
        def on_approval(self, request):
            seen.append(request)
            return ApprovalDecision("always-project")

    saved = []
    agent.permissions.persist = saved.append
    agent.run_turn("edit", Front())
    (req,) = seen
    assert req.tool == "edit_file" and req.summary == "edit app.py" and req.rule == "Edit(app.py)"
    assert "-b = 2\n+b = 3" in req.detail and "--- a/app.py" in req.detail
    assert (project / "app.py").read_text() == "a = 1\nb = 3\n" and [str(r) for r in saved] == ["Edit(app.py)"]


def test_parallel_subagents_ask_one_at_a_time_labelled(project, model_server):
    from tests.agent.test_subagents import is_child, task
    from tests.prompt_cache import last_text

    def answer(body):
        if is_child(body):
            if len(body["messages"]) == 1:
                return tool_use("bash", {"command": f"touch {last_text(body)}"})
            return text("child done")
        if len(body["messages"]) == 1:
            return [task("alpha job", "alpha", "toolu_a"), task("beta job", "beta", "toolu_b")]
        return text("both done")

    model_server.default = answer
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    inside = threading.Semaphore(1)
    overlaps, labels = [], []

    class Front:
        def on_approval(self, request):
            if not inside.acquire(blocking=False):
                overlaps.append(request)
                return ApprovalDecision("no")
            try:
                labels.append((request.agent, request.summary))
                threading.Event().wait(0.2)  # hold the question open while the other child asks
                return ApprovalDecision("yes")
            finally:
                inside.release()

    agent.run_turn("do both", Front())
    assert not overlaps
    assert sorted(labels) == [("alpha job", "run: touch alpha"), ("beta job", "run: touch beta")]
    assert (project / "alpha").exists() and (project / "beta").exists()


def test_read_only_mode_refuses_without_asking(project, model_server):
    model_server.script(tool_use("write_file", {"path": "x.txt", "content": "x"}), text("planned"))
    agent, _ = make_agent(project, server_provider(model_server), mode="read-only")

    class Front:
        def on_approval(self, request):  # pragma: no cover - must not be called
            raise AssertionError("read-only mode asked")

    agent.run_turn("plan", Front())
    assert not (project / "x.txt").exists()
    refusal = model_server.requests[1]["messages"][-1]["content"][0]
    assert refusal["is_error"] and "read-only mode" in refusal["content"]
    assert agent.permission_mode == "read-only"


def test_the_gate_is_the_policy_plus_one_lock(project):
    gate = PermissionGate(Policy(project, "ask"))
    out = gate.decide("bash", {"command": "ls"}, None)
    assert out.run and out.rule == "mode ask: read-only command"
    assert not os.path.exists(project / ".evo-agent" / "settings.json")


def test_grep_in_the_project_never_reads_through_a_symlink_out_of_it(project, tmp_path):
    from evo_agent.tools import ToolContext
    from evo_agent.tools.grep_tool import run_grep

    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY material\n")
    (project / "innocent.txt").symlink_to(secret)
    (project / "notes.txt").write_text("KEY ideas\n")
    out = run_grep({"pattern": "KEY"}, ToolContext(project_dir=project))
    assert "notes.txt:1:KEY ideas" in out.content and "PRIVATE" not in out.content


def test_a_malformed_call_is_refused_by_its_tool_without_asking(project, model_server):
    model_server.script(tool_use("bash", {"cmd": "touch x"}, id="t_bad"), text("Oops."))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")

    class Front:
        def on_approval(self, request):  # pragma: no cover - must not be called
            raise AssertionError("asked about a call that cannot run")

    agent.run_turn("go", Front())
    result = model_server.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "missing required field" in result["content"]


@settings(max_examples=300, deadline=None)
@given(tail=_words, marker=st.sampled_from([";", "&", "|", "$(", "`", ">", "<", "\n", "${"]),
       more=_words.filter(lambda w: w.strip()))
def test_a_prefix_rule_never_covers_a_second_command(tail, marker, more):
    rule = Rule.parse("Bash(npm test:*)")
    assert not rule.covers_command(f"npm test {tail}{marker}{more}")


def test_the_file_tools_themselves_never_write_the_agent_dir(project):
    from evo_agent.tools import ToolContext
    from evo_agent.tools.edit_file import run_edit_file
    from evo_agent.tools.write_file import run_write_file

    (project / ".evo-agent").mkdir()
    settings = project / ".evo-agent" / "settings.json"
    settings.write_text("{}")
    (project / "alias").symlink_to(project / ".evo-agent")
    ctx = ToolContext(project_dir=project)
    assert run_write_file({"path": "alias/settings.json", "content": "x"}, ctx).is_error
    assert run_edit_file({"path": ".evo-agent/settings.json", "old_string": "{}", "new_string": "[]"}, ctx).is_error
    assert settings.read_text() == "{}"


# --------------------------------------------------------------------------- asked on purpose (issue #26)


@pytest.mark.parametrize("old_string, why", [("not in the file", "old_string not found in app.py"),
                                             ("x", "old_string found 3 times in app.py")])
def test_an_edit_that_cannot_apply_fails_before_anyone_is_asked(project, model_server, old_string, why):
    (project / "app.py").write_text("x = 1\nx = 2\nx = 3\n")
    model_server.script(tool_use("edit_file", {"path": "app.py", "old_string": old_string, "new_string": "y"},
                                 id="t_e"), text("I will read it first."))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")

    class Front:
        def on_approval(self, request):  # pragma: no cover - must not be called
            raise AssertionError(f"asked about an edit that cannot apply: {request}")

    agent.run_turn("edit", Front())
    result = model_server.requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and result["tool_use_id"] == "t_e" and why in result["content"]
    assert (project / "app.py").read_text() == "x = 1\nx = 2\nx = 3\n"


def test_an_edit_outside_the_project_is_asked_before_its_old_string_is_looked_for(project, model_server, tmp_path):
    """Saying whether a string is in a file outside the project would be a read nobody approved."""
    secret = tmp_path / "secret.txt"
    secret.write_text("API_KEY=abc\n")
    model_server.script(tool_use("edit_file", {"path": str(secret), "old_string": "API_KEY=a", "new_string": "z"}),
                        text("ok"))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    asked = []

    class Front:
        def on_approval(self, request):
            asked.append(request)
            return ApprovalDecision("no")

    agent.run_turn("edit", Front())
    assert len(asked) == 1 and secret.read_text() == "API_KEY=abc\n"
    assert "Not run: the user refused" in model_server.requests[1]["messages"][-1]["content"][0]["content"]


def test_always_rules_are_as_narrow_as_what_was_asked(project, tmp_path):
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "notes.md").write_text("n")
    (home / ".bashrc").write_text("b")
    (project / "src").mkdir()
    policy = Policy(project, "ask")
    read = policy.check("read_file", {"path": str(home / "docs" / "notes.md")})
    assert read.action == "ask" and str(read.suggestion) == f"Read({home / 'docs' / 'notes.md'})"
    policy.session_rules.append(read.suggestion)
    assert policy.check("read_file", {"path": str(home / "docs" / "notes.md")}).action == "allow"
    assert policy.check("read_file", {"path": str(home / "docs" / "other.md")}).action == "ask"
    assert policy.check("read_file", {"path": str(home / ".bashrc")}).action == "ask"
    assert str(policy.check("grep", {"pattern": "x", "path": str(home / "docs")}).suggestion) == \
        f"Read({home / 'docs'}/**)"  # a search of a directory asked about that tree, not its parent
    edit = policy.check("edit_file", {"path": "src/app.py", "old_string": "a", "new_string": "b"})
    assert str(edit.suggestion) == "Edit(src/app.py)"
    (home / "we*ird.txt").write_text("w")  # a name a rule would read as a pattern: no "always" offered
    assert policy.check("read_file", {"path": str(home / "we*ird.txt")}).suggestion is None


@pytest.mark.parametrize("payload", ["\x1b]0;owned\x07", "\x1b[2J", "\x1b]52;c;ZXZpbA==\x07", "\u202e", "\x9b31m"])
def test_print_modes_not_run_line_is_terminal_safe(project, model_server, payload):
    model_server.script(tool_use("bash", {"command": f"touch x{payload}y"}), text("No."))
    agent, _ = make_agent(project, server_provider(model_server), mode="ask")
    notices: list[str] = []

    class Quiet:
        def on_event(self, event: TurnEvent):
            if isinstance(event, Notice | Retrying):
                notices.append(event.text)

    agent.run_turn("go", Quiet())
    (notice,) = notices
    assert notice.startswith("evo-agent: not run (needs approval): bash `touch x")
    assert not any(c in notice for c in "\x1b\x07\x9b\u202e") and "\n" not in notice
