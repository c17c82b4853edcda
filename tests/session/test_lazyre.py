"""`lazy_re` answers as `re.compile` does, compiling at the first call and not before."""

from __future__ import annotations

import re

from evo_agent.session import lazy_re


def test_every_method_answers_as_the_compiled_pattern():
    text = "a1 b22 c333 [REDACTED:x]"
    for pattern, flags in ((r"[a-z](\d+)", 0), (r"\[REDACTED:([a-z0-9-]+)\]", re.ASCII), (r"B2", re.IGNORECASE)):
        lazy, real = lazy_re(pattern, flags), re.compile(pattern, flags)
        assert lazy._compiled is None  # nothing compiled yet
        for method in ("match", "fullmatch", "search"):
            for pos in (0, 3, 7):
                a, b = getattr(lazy, method)(text, pos), getattr(real, method)(text, pos)
                assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
        assert lazy.findall(text) == real.findall(text)
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
        assert lazy.sub("<\\g<0>>", text) == real.sub("<\\g<0>>", text)
        assert lazy.sub(lambda m: m.group().upper(), text, 1) == real.sub(lambda m: m.group().upper(), text, 1)
        assert lazy.compiled is lazy.compiled and lazy.pattern == pattern
