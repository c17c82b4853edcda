"""Data classes as `dataclasses` makes them, without importing it or compiling code per class.

`import dataclasses` loads `inspect` (with `ast`, `dis`, `tokenize`: ~15 ms), and each class it
processes compiles its `__init__`, `__repr__`, `__eq__` (and a frozen class's `__setattr__`,
`__delattr__`, `__hash__`) from source: ~1 ms a class, ~60 ms for the fifty classes a `-p hi`
launch defined before its first request (SPEC §8, issue #30). The classes on that path use
`plain_dataclass` instead: the same methods, built from closures, each on its first call (`_lazy`:
most of those classes are never shown, compared or hashed before the request).

What it does as `dataclasses.dataclass` does, for the options used here (`frozen`, `eq`,
`field(default=, default_factory=, repr=, compare=)`): `__init__` takes the fields positionally or
by name in declaration order (base classes' first), defaults and factories filled in, then
`__post_init__` if defined; `__repr__` `Name(a=1, b='x')` (recursion shown as `...`); `__eq__`
between instances of the very same class, field by field; `__hash__` None for a mutable class with
`__eq__`, a hash of the fields for a frozen one; a frozen instance refuses assignment and deletion
(`FrozenInstanceError`, an AttributeError); `__match_args__`. A default after which a field has none,
or a mutable default (list, dict, set), is refused as the stdlib refuses it. What it does not do:
`dataclasses.fields`/`asdict`/`replace` (use `plain_replace`), ordering, slots, `kw_only`,
`InitVar`, `ClassVar` fields (skipped like the stdlib skips them).

tests/session/test_plaindata.py compares it with `dataclasses` on the same classes.
"""

from __future__ import annotations

from _thread import get_ident

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: `sessions list` loads this module
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar, dataclass_transform  # noqa: UP035 - Callable: no collections.abc

    _T = TypeVar("_T")
else:
    def dataclass_transform(**_: object) -> object:
        """typing's marker for type checkers; nothing at run time."""
        return lambda function: function


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assigning to (or deleting) a field of a frozen instance, as `dataclasses.FrozenInstanceError`."""


class Field:
    """One field: its name, default or default factory, and whether repr and comparison show it."""

    __slots__ = ("compare", "default", "default_factory", "name", "repr")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True,  # noqa: A002
                 compare: bool = True) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


def plain_field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING,
                repr: bool = True, compare: bool = True) -> Any:  # noqa: A002 - the stdlib's keyword
    """`dataclasses.field` for `plain_dataclass`."""
    return Field(default, default_factory, repr, compare)


@dataclass_transform(field_specifiers=(plain_field,))
def plain_dataclass(cls: type[_T] | None = None, /, *, frozen: bool = False,
                    eq: bool = True) -> Any:
    """`dataclasses.dataclass` (the options used here: `frozen`, `eq`), built without compiling code."""

    def wrap(klass: type[_T]) -> type[_T]:
        return _process(klass, frozen, eq)

    return wrap if cls is None else wrap(cls)


def plain_replace(obj: _T, /, **changes: Any) -> _T:
    """`dataclasses.replace` for a `plain_dataclass` instance: a new one with `changes`."""
    fields: tuple[Field, ...] = type(obj).__plain_fields__  # type: ignore[attr-defined]
    for f in fields:
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


_MUTABLE = (list, dict, set)


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__qualname__", "")
    return isinstance(text, str) and "ClassVar" in text and text.split("[", 1)[0] in ("ClassVar", "typing.ClassVar")


def _own_fields(cls: type) -> list[Field]:
    fields = []
    own = cls.__dict__
    for name, annotation in own.get("__annotations__", {}).items():  # the class's own annotations, as written
        if _is_classvar(annotation):
            continue
        value = own.get(name, MISSING)
        if isinstance(value, Field):  # the class attribute is the default itself, as the stdlib leaves it
            f = value
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        else:
            f = Field(value)
        f.name = name
        if type(f.default) in _MUTABLE:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        fields.append(f)
    return fields


def _process(cls: type[_T], frozen: bool, eq: bool) -> type[_T]:
    inherited: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__plain_fields__", ()):
            inherited[f.name] = f
    for f in _own_fields(cls):
        inherited[f.name] = f
    fields = tuple(inherited.values())
    seen_default = False
    for f in fields:
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default
    cls.__plain_fields__ = fields  # type: ignore[attr-defined]
    own = cls.__dict__
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        name = "__setattr__" if "__setattr__" in own else "__delattr__"
        raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    class_hash = own.get("__hash__", MISSING)
    explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    if "__init__" not in own:
        cls.__init__ = _lazy(cls, "__init__", frozen)  # type: ignore[method-assign]
    if "__repr__" not in own:
        cls.__repr__ = _lazy(cls, "__repr__", frozen)  # type: ignore[method-assign]
    if eq and "__eq__" not in own:
        cls.__eq__ = _lazy(cls, "__eq__", frozen)  # type: ignore[method-assign]
    if eq and not explicit_hash:
        cls.__hash__ = _lazy(cls, "__hash__", frozen) if frozen else None  # type: ignore[assignment,method-assign]
    if frozen:
        cls.__setattr__ = _lazy(cls, "__setattr__", frozen)  # type: ignore[method-assign]
        cls.__delattr__ = _lazy(cls, "__delattr__", frozen)  # type: ignore[method-assign]
    if "__match_args__" not in cls.__dict__:
        cls.__match_args__ = tuple(f.name for f in fields)  # type: ignore[attr-defined,misc]
    return cls


def _lazy(cls: type, name: str, frozen: bool) -> Callable[..., Any]:
    """A stand-in for method `name` of `cls` that builds the method on its first call and puts it in its place.

    Most classes on `-p`'s path are never compared, hashed or shown before the first request (SPEC §8,
    issue #30): building their methods only when used saves a closure build per method and class.
    """

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        fields: tuple[Field, ...] = cls.__plain_fields__  # type: ignore[attr-defined]
        made = _BUILDERS[name](cls, fields, frozen)
        made.__qualname__ = method.__qualname__
        if cls.__dict__.get(name) is method:
            setattr(cls, name, made)
        return made(self, *args, **kwargs)

    method.__qualname__ = f"{cls.__qualname__}.{name}"
    method.__name__ = name
    return method


def _init(cls: type, fields: tuple[Field, ...], frozen: bool) -> Callable[..., None]:
    names = tuple(f.name for f in fields)
    known = frozenset(names)
    count = len(fields)
    required = sum(f.default is MISSING and f.default_factory is MISSING for f in fields)
    qualname = f"{cls.__qualname__}.__init__()"
    takes = f"from {required + 1} to {count + 1}" if required < count else f"{count + 1}"
    assign = object.__setattr__ if frozen else setattr
    has_post_init = hasattr(cls, "__post_init__")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > count:
            raise TypeError(f"{qualname} takes {takes} positional arguments but {len(args) + 1} were given")
        values = dict(zip(names, args, strict=False))
        for key, value in kwargs.items():
            if key not in known:
                raise TypeError(f"{qualname} got an unexpected keyword argument {key!r}")
            if key in values:
                raise TypeError(f"{qualname} got multiple values for argument {key!r}")
            values[key] = value
        for f in fields:
            name = f.name
            if name in values:
                value = values[name]
            elif f.default is not MISSING:
                value = f.default
            elif f.default_factory is not MISSING:
                value = f.default_factory()
            else:
                raise TypeError(f"{qualname} missing 1 required positional argument: {name!r}")
            assign(self, name, value)
        if has_post_init:
            self.__post_init__()

    return __init__


def _repr(_cls: type, fields: tuple[Field, ...], _frozen: bool) -> Callable[[Any], str]:
    shown = tuple(f.name for f in fields if f.repr)
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in running:
            return "..."
        running.add(key)
        try:
            inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        finally:
            running.discard(key)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _eq(_cls: type, fields: tuple[Field, ...], _frozen: bool) -> Callable[[Any, Any], Any]:
    compared = tuple(f.name for f in fields if f.compare)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
        return NotImplemented

    return __eq__


def _hash(_cls: type, fields: tuple[Field, ...], _frozen: bool) -> Callable[[Any], int]:
    hashed = tuple(f.name for f in fields if f.compare)

    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in hashed))

    return __hash__


def _frozen_setattr(cls: type, fields: tuple[Field, ...], _frozen: bool) -> Callable[[Any, str, Any], None]:
    names = frozenset(f.name for f in fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]

    return __setattr__


def _frozen_delattr(cls: type, fields: tuple[Field, ...], _frozen: bool) -> Callable[[Any, str], None]:
    names = frozenset(f.name for f in fields)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]

    return __delattr__


_BUILDERS: dict[str, Callable[[type, tuple[Field, ...], bool], Callable[..., Any]]] = {
    "__init__": _init, "__repr__": _repr, "__eq__": _eq, "__hash__": _hash,
    "__setattr__": _frozen_setattr, "__delattr__": _frozen_delattr,
}
