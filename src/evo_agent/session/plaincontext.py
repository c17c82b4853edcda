"""`contextlib.contextmanager` without importing contextlib (~3 M instructions before `-p`'s first request).

The session library's lock holders (`MemoryStore._scope`, `PlanStore._locked`, `held_for_removal`) are
generators that yield once and clean up in `finally`; `plain_contextmanager` makes them context managers
as contextlib does for that shape: `__enter__` runs the generator to its `yield` (and returns what it
yields), `__exit__` resumes it (or throws the exception in) and expects it to stop. An exception the
generator lets through propagates unchanged; one it swallows is swallowed, as with contextlib.
tests/session/test_plaincontext.py compares the two.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (issue #30: -p's first request)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from types import TracebackType
    from typing import Any, TypeVar

    T = TypeVar("T")


class _GeneratorContext:
    """One `with` over one generator: what contextlib's _GeneratorContextManager does for a single yield."""

    __slots__ = ("_gen",)

    def __init__(self, gen: Any) -> None:  # a generator (annotated Iterator by its function)
        self._gen = gen

    def __enter__(self) -> Any:
        try:
            return next(self._gen)
        except StopIteration:
            raise RuntimeError("generator didn't yield") from None

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> bool:
        if kind is None:
            try:
                next(self._gen)
            except StopIteration:
                return False
            raise RuntimeError("generator didn't stop")
        if value is None:
            value = kind()
        try:
            self._gen.throw(value)
        except StopIteration as exc:
            return exc is not value  # the generator swallowed the exception
        except BaseException as exc:
            if exc is value:
                exc.__traceback__ = traceback
                return False
            raise
        raise RuntimeError("generator didn't stop after throw()")


def plain_contextmanager(func: Callable[..., Iterator[T]]) -> Callable[..., AbstractContextManager[T]]:
    """`@contextlib.contextmanager` for a generator that yields once (see the module's docstring)."""

    def helper(*args: Any, **kwargs: Any) -> _GeneratorContext:
        return _GeneratorContext(func(*args, **kwargs))

    helper.__name__ = func.__name__
    helper.__qualname__ = func.__qualname__
    helper.__doc__ = func.__doc__
    helper.__wrapped__ = func  # type: ignore[attr-defined]
    return helper


__all__ = ["plain_contextmanager"]
