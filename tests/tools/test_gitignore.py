"""glob and grep skip what git ignores (.gitignore, nested ones, .git/info/exclude), as ripgrep does,
unless asked to include it; `.git` itself is never listed. Checked against `git check-ignore`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evo_agent.tools import BASIC_TOOLS, ToolContext, run_tool
from evo_agent.tools.ignore import IgnoreRules


def call(ctx, name, **tool_input):
    return run_tool(BASIC_TOOLS, name, tool_input, ctx)


FILES = {
    ".gitignore": ".venv/\n*.log\n!keep.log\nbuild\n",
    ".venv/lib/site.py": "def main(): pass\n",
    "src/app.py": "def main(): pass\n",
    "src/debug.log": "def main in a log\n",
    "src/keep.log": "def main kept\n",
    "src/build/out.py": "def main(): built\n",
    "src/vendor/.gitignore": "*.py\n!wanted.py\n",
    "src/vendor/lib.py": "def main(): vendored\n",
    "src/vendor/wanted.py": "def main(): wanted\n",
    "local/secret.py": "def main(): excluded locally\n",
}


def make_repo(project: Path) -> None:
    for rel, text in FILES.items():
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (project / ".git" / "info").mkdir(exist_ok=True)
    (project / ".git" / "info" / "exclude").write_text("local/\n")


def git_ignored(project: Path, rels: list[str]) -> set[str]:
    out = subprocess.run(["git", "-C", str(project), "check-ignore", "--no-index", *rels],
                         capture_output=True, text=True)
    return set(out.stdout.split())


def test_rules_agree_with_git_check_ignore(project):
    make_repo(project)
    rels = [rel for rel in FILES] + ["src/build", ".venv"]
    rules = IgnoreRules(project)
    ours = {rel for rel in rels if rules.ignored(project / rel, (project / rel).is_dir())
            or any(rules.ignored(p, True) for p in (project / rel).parents if project in p.parents)}
    assert ours == git_ignored(project, rels)


def test_glob_skips_ignored_files_unless_asked(project):
    make_repo(project)
    ctx = ToolContext(project_dir=project)
    listed = call(ctx, "glob", pattern="**/*").content.splitlines()
    assert listed == [".gitignore", "README.md", "src/", "src/app.py", "src/keep.log", "src/vendor/",
                      "src/vendor/.gitignore", "src/vendor/wanted.py"]
    everything = call(ctx, "glob", pattern="**/*.py", include_ignored=True).content.splitlines()
    assert ".venv/lib/site.py" in everything and "local/secret.py" in everything and "src/vendor/lib.py" in everything
    assert not any(line.startswith(".git/") for line in call(ctx, "glob", pattern="**", include_ignored=True)
                   .content.splitlines())
    named = call(ctx, "glob", pattern=".venv/**/*.py")  # naming an ignored directory searches it
    assert named.content.splitlines() == [".venv/lib/site.py"]
    none = call(ctx, "glob", pattern="**/*.nothing")
    assert "include_ignored" in none.content


def test_grep_skips_ignored_files_unless_asked(project):
    make_repo(project)
    ctx = ToolContext(project_dir=project)
    hits = call(ctx, "grep", pattern="def main").content.splitlines()
    assert [h.split(":")[0] for h in hits] == ["src/app.py", "src/keep.log", "src/vendor/wanted.py"]
    wide = call(ctx, "grep", pattern="def main", include_ignored=True).content
    assert ".venv/lib/site.py" in wide and "src/debug.log" in wide and "local/secret.py" in wide
    assert "src/build/out.py" in call(ctx, "grep", pattern="built", path="src/build").content
    assert "site.py" in call(ctx, "grep", pattern="def main", path=".venv/lib/site.py").content
