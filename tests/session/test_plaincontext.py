"""plain_contextmanager behaves as contextlib.contextmanager for a generator that yields once."""

from __future__ import annotations

import contextlib

import pytest

from evo_agent.session.plaincontext import plain_contextmanager

DECORATORS = [contextlib.contextmanager, plain_contextmanager]


def _make(decorator, log, *, swallow=False, no_yield=False, twice=False):
    @decorator
    def held(value):
        log.append("enter")
        if no_yield:
            return
        try:
            yield value
            if twice:
                yield value
        except KeyError:
            log.append("caught")
            if not swallow:
                raise
        finally:
            log.append("exit")
    return held


@pytest.mark.parametrize("decorator", DECORATORS)
def test_the_value_and_the_cleanup(decorator):
    log: list[str] = []
    with _make(decorator, log)(7) as value:
        log.append(value)
    assert log == ["enter", 7, "exit"]


@pytest.mark.parametrize("decorator", DECORATORS)
def test_an_exception_propagates_unchanged_after_the_cleanup(decorator):
    log: list[str] = []
    error = KeyError("k")
    with pytest.raises(KeyError) as raised, _make(decorator, log)(1):
        raise error
    assert raised.value is error and log == ["enter", "caught", "exit"]
    other = ValueError("v")
    with pytest.raises(ValueError) as raised2, _make(decorator, log)(1):
        raise other
    assert raised2.value is other


@pytest.mark.parametrize("decorator", DECORATORS)
def test_an_exception_the_generator_swallows_is_swallowed(decorator):
    log: list[str] = []
    with _make(decorator, log, swallow=True)(1):
        raise KeyError("k")
    assert log == ["enter", "caught", "exit"]


@pytest.mark.parametrize("decorator", DECORATORS)
def test_a_generator_that_does_not_yield_once_is_an_error(decorator):
    with pytest.raises(RuntimeError), _make(decorator, [], no_yield=True)(1):
        pass
    with pytest.raises(RuntimeError), _make(decorator, [], twice=True)(1):
        pass


def test_the_function_keeps_its_name_and_docstring():
    def held():
        """Held."""
        yield

    made = plain_contextmanager(held)
    assert (made.__name__, made.__doc__) == ("held", "Held.")
