"""`plain_dataclass` behaves as `dataclasses.dataclass` on the same class, for the options it takes."""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import pytest

from evo_agent.session import plain_dataclass, plain_field, plain_replace
from evo_agent.session.plaindata import FrozenInstanceError


def twins(frozen: bool) -> tuple[type, type]:
    """One class body made by each decorator."""

    def make(decorator: Any, field: Any) -> type:
        class Thing:
            """A thing."""

            name: str
            size: int = 3
            tags: list[str] = field(default_factory=list)
            secret: str = field(default="s", repr=False)
            note: str = field(default="", compare=False)
            lock: Any = field(default_factory=threading.Lock, repr=False, compare=False)

            def label(self) -> str:
                return f"{self.name}:{self.size}"

        return decorator(frozen=frozen)(Thing)

    return make(dataclasses.dataclass, dataclasses.field), make(plain_dataclass, plain_field)


@pytest.mark.parametrize("frozen", [False, True])
def test_the_same_instances_reprs_equality_and_hashes(frozen):
    std, plain = twins(frozen)
    for args, kwargs in (((("a",), {})), (("a", 5), {}), (("a",), {"tags": ["x"], "note": "n"}),
                         ((), {"name": "b", "size": 0, "secret": "t"})):
        a, b = std(*args, **kwargs), plain(*args, **kwargs)
        assert repr(a) == repr(b)
        assert a.label() == b.label()
        assert (a == std(*args, **kwargs)) and (b == plain(*args, **kwargs))
        assert (a == std(*args, **{**kwargs, "note": "other"})) == (b == plain(*args, **{**kwargs, "note": "other"}))
        assert (a != std("zz")) and (b != plain("zz"))
        assert (b == a) is False and b.__eq__(a) is NotImplemented
        if frozen:  # a hash of the fields: the list in them makes both unhashable
            for obj in (a, b):
                with pytest.raises(TypeError, match="unhashable type: 'list'"):
                    hash(obj)
        else:
            assert std.__hash__ is None and plain.__hash__ is None
    assert std.__match_args__ == plain.__match_args__
    assert std("a").tags is not std("a").tags and plain("a").tags is not plain("a").tags
    assert std.size == plain.size == 3 and not hasattr(plain, "tags") and not hasattr(std, "tags")


@pytest.mark.parametrize("frozen", [False, True])
def test_the_same_refusals(frozen):
    std, plain = twins(frozen)
    for args, kwargs in (((), {}), (("a", 1, [], "s", "n", None, 9), {}), (("a",), {"name": "b"}),
                         (("a",), {"colour": 1})):
        with pytest.raises(TypeError) as s:
            std(*args, **kwargs)
        with pytest.raises(TypeError) as p:
            plain(*args, **kwargs)
        assert str(p.value).split("()")[-1] == str(s.value).split("()")[-1]
    a, b = std("a"), plain("a")
    if frozen:
        for obj, error in ((a, dataclasses.FrozenInstanceError), (b, FrozenInstanceError)):
            with pytest.raises(error, match="cannot assign to field 'size'"):
                obj.size = 4
            with pytest.raises(error, match="cannot delete field 'size'"):
                del obj.size
            with pytest.raises(AttributeError):
                obj.other = 1
    else:
        a.size = b.size = 4
        assert repr(a) == repr(b)


def test_match_inheritance_post_init_and_replace():
    @plain_dataclass(frozen=True)
    class Base:
        x: int
        y: int = 0

    @plain_dataclass(frozen=True)
    class Child(Base):
        z: str = ""

        def __post_init__(self) -> None:
            object.__setattr__(self, "z", self.z or "made")

    c = Child(1, 2)
    assert repr(c) == "test_match_inheritance_post_init_and_replace.<locals>.Child(x=1, y=2, z='made')"
    match c:
        case Child(x, y, z):
            assert (x, y, z) == (1, 2, "made")
    assert plain_replace(c, y=5) == Child(1, 5, "made") and c.y == 2


def test_definition_errors_as_the_stdlib_raises_them():
    for decorator, field in ((dataclasses.dataclass, dataclasses.field), (plain_dataclass, plain_field)):
        with pytest.raises(TypeError):
            @decorator
            class A:
                a: int = 1
                b: int

        with pytest.raises(ValueError):
            @decorator
            class B:
                a: list[int] = []  # noqa: RUF012

        with pytest.raises(ValueError):
            field(default=1, default_factory=list)


def test_recursion_in_repr_is_shown_as_dots():
    std, plain = twins(False)
    a, b = std("a"), plain("a")
    a.tags.append(a)
    b.tags.append(b)
    assert repr(a).replace("Thing", "") == repr(b).replace("Thing", "")


def _first_use(kind: str, obj: Any, twin: Any) -> object:
    if kind == "repr":
        return repr(obj)
    if kind == "eq":
        return (obj == twin, obj != twin, obj == "other")
    if kind == "hash":
        return hash(obj) == hash(twin)
    if kind == "setattr":
        try:
            obj.size = 9
        except AttributeError as exc:
            return type(exc).__name__, str(exc)
        return obj.size
    if kind == "delattr":
        try:
            del obj.size
        except AttributeError as exc:
            return type(exc).__name__, str(exc)
        return "deleted"
    if kind == "copy":
        import copy
        import pickle

        return repr(copy.copy(obj)), repr(copy.deepcopy(obj)), pickle.loads(pickle.dumps(obj)) == obj
    raise AssertionError(kind)


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("kind", ["repr", "eq", "hash", "setattr", "delattr", "copy"])
def test_methods_built_on_first_use_behave_as_the_stdlibs(frozen, kind):
    """Each method is made when first called (plaindata's `_lazy`): whatever comes first, the same answers."""

    def make(decorator: Any) -> type:
        class Point:
            name: str
            size: int = 3

        Point.__qualname__ = Point.__name__ = f"Point{decorator is plain_dataclass}"
        globals()[Point.__name__] = Point  # pickled by name
        return decorator(frozen=frozen)(Point)

    std, plain = make(dataclasses.dataclass), make(plain_dataclass)
    if kind == "hash" and not frozen:
        assert std.__hash__ is None and plain.__hash__ is None
        return
    got = _first_use(kind, plain("a"), plain("a"))
    want = _first_use(kind, std("a"), std("a"))
    assert str(got).replace("PointTrue", "Point") == str(want).replace("PointFalse", "Point").replace(
        "dataclasses.", "")
    assert _first_use(kind, plain("a"), plain("a")) == got  # the built method, now in the stand-in's place
    assert plain.__repr__.__qualname__ == "PointTrue.__repr__"


def test_a_subclass_gets_its_parents_methods_built_for_the_parent():
    @plain_dataclass
    class Base:
        x: int

    class Sub(Base):  # not decorated: Base's __init__, __repr__ and __eq__, as with dataclasses
        def __init__(self, x: int) -> None:
            super().__init__(x + 1)

    s = Sub(1)
    assert s.x == 2 and repr(s) == f"{Sub.__qualname__}(x=2)"
    assert s == Sub(1) and s != Base(2) and Base(2) == Base(2)
