"""The index never drifts: after any sequence of memory commands (and refusals), MEMORY.md says exactly what the
topic files' front matter says, read back independently of the store."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evo_agent.session import MemoryRefused, MemoryStore
from evo_agent.session.memory_store import INDEX_HEADER

NAMES = ["a.md", "b.md", "notes.md", "z-last.md"]
WORDS = st.text(alphabet="abcdefghij XYZ", min_size=1, max_size=10).map(lambda s: s.strip() or "w")
KINDS = st.sampled_from(["user", "feedback", "project", "reference", "bogus"])


def topic_text(name: str, description: str, kind: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"


path_of = st.sampled_from(NAMES).map(lambda n: f"/memories/project/{n}")
operations = st.one_of(
    st.tuples(st.just("create"), path_of, WORDS, WORDS, KINDS, WORDS),
    st.tuples(st.just("str_replace"), path_of, st.sampled_from(["name: ", "description: ", "type: project", "x"]),
              WORDS),
    st.tuples(st.just("insert"), path_of, st.integers(-1, 8), WORDS),
    st.tuples(st.just("delete"), path_of),
    st.tuples(st.just("rename"), path_of, path_of),
)


def run(store: MemoryStore, op: tuple) -> None:
    command = op[0]
    if command == "create":
        fields = {"path": op[1], "file_text": topic_text(*op[2:])}
    elif command == "str_replace":
        fields = {"path": op[1], "old_str": op[2], "new_str": op[2] + op[3]}
    elif command == "insert":
        fields = {"path": op[1], "insert_line": op[2], "insert_text": op[3]}
    elif command == "delete":
        fields = {"path": op[1]}
    else:
        fields = {"old_path": op[1], "new_path": op[2]}
    try:
        store.apply(store.plan(command, fields))
    except MemoryRefused:
        pass


def expected_index(directory: Path) -> str:
    """What the index must say, read straight from the files (an oracle that shares no code with the store)."""
    lines = []
    for path in sorted(directory.glob("*.md")):
        if path.name == "MEMORY.md":
            continue
        fields = dict(re.findall(r"^(name|description|type): (.*)$", path.read_text().split("\n---\n")[0], re.M))
        name, description = (" ".join(fields[k].split()) for k in ("name", "description"))  # one line each
        lines.append(f"- [{name}]({path.name}) — {description}")
    return "\n".join([INDEX_HEADER, "", *lines]) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operations, max_size=10))
def test_the_index_always_equals_the_topic_files_front_matter(ops):
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(tmp, user_dir=Path(tmp) / "user")
        directory = Path(tmp) / ".evo-agent" / "memory"
        for op in ops:
            run(store, op)
            if directory.exists():
                assert (directory / "MEMORY.md").read_text() == expected_index(directory), op
                # and every topic file on disk has valid front matter (a write that would break it was refused)
                for path in directory.glob("*.md"):
                    if path.name != "MEMORY.md":
                        assert re.search(r"^type: (user|feedback|project|reference)$", path.read_text(), re.M)
