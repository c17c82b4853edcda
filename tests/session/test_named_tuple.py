"""session/named_tuple.py builds the same classes as `typing.NamedTuple` (it stands in for it at run time)."""

from __future__ import annotations

import typing

import pytest

from evo_agent.session.named_tuple import NamedTuple


class Ours(NamedTuple):
    """A row."""

    name: str
    count: int = 0
    tag: str | None = None

    def doubled(self) -> int:
        return 2 * self.count


class Theirs(typing.NamedTuple):
    """A row."""

    name: str
    count: int = 0
    tag: str | None = None

    def doubled(self) -> int:
        return 2 * self.count


def test_it_builds_what_typing_builds():
    for cls in (Ours, Theirs):
        row = cls("a", 3)
        assert row == ("a", 3, None) and isinstance(row, tuple)
        assert cls._fields == ("name", "count", "tag")
        assert cls._field_defaults == {"count": 0, "tag": None}
        assert row.doubled() == 6 and row._replace(count=1).doubled() == 2
        assert repr(row) == f"{cls.__name__}(name='a', count=3, tag=None)"
        assert cls.__doc__ == "A row." and cls.__module__ == __name__
        assert list(cls.__annotations__) == ["name", "count", "tag"]
        assert cls.__qualname__ == cls.__name__
        with pytest.raises(AttributeError):
            row.name = "b"  # type: ignore[misc]
    assert Ours("a", tag="x") == Theirs("a", tag="x")


def test_a_field_without_a_default_after_one_with_is_refused_as_typing_does():
    with pytest.raises(TypeError):
        class Bad(NamedTuple):
            first: int = 0
            second: int

    with pytest.raises(TypeError):
        class AlsoBad(typing.NamedTuple):
            first: int = 0
            second: int


def test_the_listings_row_types_are_built_here():
    from evo_agent.session.origin import Made
    from evo_agent.session.project import Worktree
    from evo_agent.session.records import RecordType

    assert Made._fields == ("ids", "since_ns") and Made(frozenset({"x"}), 5).knows("x", 9)
    assert Worktree._fields == ("path", "branch")
    assert RecordType("t").activity is True and RecordType("t").shown == ""
