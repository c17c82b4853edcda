"""glob and grep over real directory trees, including a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool
from evo_agent.tools.glob_tool import MAX_RESULTS
from evo_agent.tools.grep_tool import MAX_MATCHES


def call(ctx, name, **tool_input):
    return run_tool(BASIC_TOOLS, name, tool_input, ctx)


def make_tree(root: Path) -> None:
    files = {
        "README.md": "hello world\n",
        "src/pkg/__init__.py": "",
        "src/pkg/core.py": "def hello():\n    return 'world'\n",
        "src/pkg/sub/deep.py": "HELLO = 1\n",
        "tests/test_core.py": "from pkg.core import hello\n",
        ".evo-agent/sessions/x.jsonl": '{"hello": 1}\n',
        ".hidden/conf.py": "hello = True\n",
    }
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


# --- glob --------------------------------------------------------------------


def test_glob_double_star_sorted_by_path_and_skips_git(project: Path):
    make_tree(project)
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    ctx = ToolContext(project_dir=project)
    r = call(ctx, "glob", pattern="**/*.py")
    assert not r.is_error
    assert r.content.splitlines() == [
        ".hidden/conf.py",
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/sub/deep.py",
        "tests/test_core.py",
    ]
    everything = call(ctx, "glob", pattern="**").content
    assert ".git" not in everything and ".evo-agent" not in everything
    assert "README.md" in everything


def test_glob_prefix_and_single_level(ctx):
    make_tree(ctx.project_dir)
    assert call(ctx, "glob", pattern="src/**/*.py").content.splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/core.py",
        "src/pkg/sub/deep.py",
    ]
    assert call(ctx, "glob", pattern="src/*/*.py").content.splitlines() == [
        "src/pkg/__init__.py",
        "src/pkg/core.py",
    ]
    assert call(ctx, "glob", pattern="*.md").content == "README.md"
    assert call(ctx, "glob", pattern="src/*").content == "src/pkg/"
    assert call(ctx, "glob", pattern="README.md").content == "README.md"


def test_glob_no_match_is_not_an_error(ctx):
    r = call(ctx, "glob", pattern="**/*.rs")
    assert not r.is_error and "No files" in r.content


def test_glob_caps_results(ctx):
    d = ctx.project_dir / "many"
    d.mkdir()
    for i in range(MAX_RESULTS + 20):
        (d / f"f{i:04}.txt").write_text("")
    lines = call(ctx, "glob", pattern="many/*.txt").content.splitlines()
    assert len(lines) == MAX_RESULTS + 1
    assert lines[0] == "many/f0000.txt"
    assert f"{MAX_RESULTS} of {MAX_RESULTS + 20}" in lines[-1]


# --- grep --------------------------------------------------------------------


def test_grep_finds_lines_and_skips_git_and_evo_agent(project: Path):
    make_tree(project)
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    ctx = ToolContext(project_dir=project)
    r = call(ctx, "grep", pattern="hello")
    assert not r.is_error
    # Files of a directory come before its subdirectories, each level by name.
    assert r.content.splitlines() == [
        "README.md:1:hello world",
        ".hidden/conf.py:1:hello = True",
        "src/pkg/core.py:1:def hello():",
        "tests/test_core.py:1:from pkg.core import hello",
    ]


def test_grep_regex_and_path(ctx):
    make_tree(ctx.project_dir)
    assert call(ctx, "grep", pattern=r"(?i)^hello\b", path="src").content == "src/pkg/sub/deep.py:1:HELLO = 1"
    assert call(ctx, "grep", pattern="return", path="src/pkg/core.py").content == "src/pkg/core.py:2:    return 'world'"


def test_grep_skips_binary_files(ctx):
    (ctx.project_dir / "blob.bin").write_bytes(b"needle\0\x01\x02")
    (ctx.project_dir / "text.txt").write_text("a needle here\n")
    assert call(ctx, "grep", pattern="needle").content == "text.txt:1:a needle here"


def test_grep_invalid_regex_and_missing_path(ctx):
    r = call(ctx, "grep", pattern="(unclosed")
    assert r.is_error and "invalid regex" in r.content
    r = call(ctx, "grep", pattern="x", path="nowhere")
    assert r.is_error and "not found" in r.content


def test_grep_no_match_is_not_an_error(ctx):
    (ctx.project_dir / "a.txt").write_text("abc\n")
    r = call(ctx, "grep", pattern="zzz")
    assert not r.is_error and "No matches" in r.content


def test_grep_caps_matches(ctx):
    (ctx.project_dir / "many.txt").write_text("match\n" * (MAX_MATCHES + 50))
    lines = call(ctx, "grep", pattern="match").content.splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1].startswith(f"[stopped after {MAX_MATCHES} matches")
