"""`typing.NamedTuple`'s class syntax without importing `typing` (a twentieth of `sessions list`'s start-up).

The listing's row types (`RecordType`, `Made`, `Worktree`) are NamedTuples; at run time they are built
here by `collections.namedtuple`, as typing builds them: the annotated names are the fields, those
with a value have that default, everything else in the class body (methods, docstring) is set on the
class. Type checkers see `typing.NamedTuple` itself. No generics, no inheritance from another NamedTuple.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    _NOT_SET = frozenset({"__module__", "__qualname__", "__annotations__"})

    class _NamedTupleMeta(type):
        def __new__(mcs, typename, bases, namespace):  # noqa: N804 - a metaclass's first argument
            fields = tuple(namespace.get("__annotations__", {}))
            defaults = [namespace[name] for name in fields if name in namespace]
            if any(name not in namespace for name in fields[len(fields) - len(defaults):]):
                raise TypeError(f"{typename}: a field without a default follows one with a default")
            made = collections.namedtuple(typename, fields, defaults=defaults, module=namespace["__module__"])
            made.__qualname__ = namespace.get("__qualname__", typename)
            made.__annotations__ = dict(namespace.get("__annotations__", {}))
            for key, value in namespace.items():
                if key not in _NOT_SET and key not in fields:
                    setattr(made, key, value)
            return made

    NamedTuple = type.__new__(_NamedTupleMeta, "NamedTuple", (), {})
