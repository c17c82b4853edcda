import os
import re

import pytest

from evo_agent.session import (
    AmbiguousSessionId,
    InvalidSessionId,
    SessionNotFound,
    is_session_id,
    new_session_id,
    resolve_session_id,
    sidechain_file_name,
    slug_agent_name,
)


def test_new_ids_have_the_documented_shape_and_sort_by_creation():
    ids = [new_session_id(now_ms=ms) for ms in (999, 1780227556183, 1780227556184)]
    assert all(re.fullmatch(r"\d{13}_[0-9a-f]{8}", i) for i in ids)
    assert ids == sorted(ids)
    assert ids[0].startswith("0000000000999_")
    assert len({new_session_id() for _ in range(200)}) == 200


def test_validation_accepts_only_ascii_digits_and_lowercase_hex():
    assert is_session_id("1780227556183_b525857d")
    for bad in ("1780227556183_B525857D", "1780227556183-b525857d", "١٧٨٠٢٢٧٥٥٦١٨٣_b525857d",
                "1780227556183_b525857d\n", "", None, 17):
        assert not is_session_id(bad)


@pytest.mark.parametrize("hostile", [
    "../x", "..", "/etc/passwd", "1780227556183_b525857d/../../x", "a" * 300, "", "1780227556183_b525857\x00",
    "1780227556183_b525857d_", " 1780227556183", "*", "17802275561831",
])
def test_hostile_ids_are_refused_before_any_path_is_built(tmp_path, hostile):
    # A sibling directory that a path-building resolver would find: it must not.
    (tmp_path / "x").mkdir()
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    with pytest.raises(InvalidSessionId) as info:
        resolve_session_id(sessions, hostile)
    assert "\n" not in str(info.value) and len(str(info.value)) < 200


def test_prefix_resolution_unique_ambiguous_and_unknown(tmp_path):
    for name in ("1780227556183_b525857d", "1780227556183_b5ffffff", "1780227999999_00000000"):
        (tmp_path / name).mkdir()
    (tmp_path / "1780227556183_zzz").mkdir()  # not an id: never matched
    assert resolve_session_id(tmp_path, "1780227556183_b525857d") == "1780227556183_b525857d"
    assert resolve_session_id(tmp_path, "1780227556183_b52") == "1780227556183_b525857d"
    assert resolve_session_id(tmp_path, "1780227999") == "1780227999999_00000000"
    with pytest.raises(AmbiguousSessionId, match="2 sessions match"):
        resolve_session_id(tmp_path, "1780227556183")
    with pytest.raises(SessionNotFound):
        resolve_session_id(tmp_path, "1780227556183_c")
    with pytest.raises(SessionNotFound):
        resolve_session_id(tmp_path / "missing", "1780227556183_b525857d")


@pytest.mark.parametrize("name,slug", [
    ("general-purpose", "general-purpose"),
    ("Explore the Code!", "explore-the-code"),
    ("review_tests", "review-tests"),
    ("___", "agent"),
    ("Ünïcode ☃ name", "n-code-name"),
    ("x" * 100, "x" * 40),
])
def test_agent_names_are_slugged(name, slug):
    assert slug_agent_name(name) == slug
    assert re.fullmatch(r"[a-z0-9-]{1,40}", slug_agent_name(name))


def test_sidechain_file_names_split_into_three_fields():
    name = sidechain_file_name("general-purpose", now_ms=1780227612455)
    stem, ext = os.path.splitext(name)
    assert ext == ".jsonl"
    ms, slug, rand = stem.split("_")
    assert (ms, slug) == ("1780227612455", "general-purpose")
    assert re.fullmatch(r"[0-9a-f]{4}", rand)
