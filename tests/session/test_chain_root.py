"""`root_session_id`: every resume records the first session of its chain (SPEC §12: the conversation's
identity, from which the agent makes its system prompt and its cache key), and meta.json caches it."""

from __future__ import annotations

import json

from tests.builders import quiet_store, seed_session


def _marker(store, session_id: str) -> dict:
    path = store.sessions_dir / session_id / "messages.jsonl"
    return next(r for r in map(json.loads, path.read_bytes().splitlines()) if r["type"] == "resume_marker")


def test_every_resume_of_a_chain_records_its_first_session(project):
    store = quiet_store(project)
    first = seed_session(project, ("hello", "hi"))
    second = store.resume(first, model="m", provider="p")
    second.recorder.checkpoint()
    third = store.resume(second.recorder.session_id, model="m", provider="p")
    third.recorder.checkpoint()
    rewound = store.resume(third.recorder.session_id, model="m", provider="p", before_turn=1)
    for resumed in (second, third, rewound):
        assert _marker(store, resumed.recorder.session_id)["root_session_id"] == first
        assert resumed.recorder.meta.root_session_id == first
    # meta.json keeps it, and a rebuilt meta finds it again in the transcript
    meta_path = store.sessions_dir / third.recorder.session_id / "meta.json"
    assert json.loads(meta_path.read_bytes())["root_session_id"] == first
    meta_path.unlink()
    assert store.info(third.recorder.session_id).meta.root_session_id == first
    assert store.info(first).meta.root_session_id is None  # a chain's first session names none


def test_a_chain_resumed_before_roots_were_recorded_is_walked_back_once(project):
    store = quiet_store(project)
    first = seed_session(project, ("hello", "hi"))
    second = store.resume(first, model="m", provider="p")
    second.recorder.checkpoint()
    sid = second.recorder.session_id
    # as an older evo-agent wrote it: a resume_marker without root_session_id, a meta.json without it
    path = store.sessions_dir / sid / "messages.jsonl"
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    for record in records:
        record.pop("root_session_id", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (store.sessions_dir / sid / "meta.json").unlink()
    assert store.info(sid).meta.root_session_id is None
    third = store.resume(sid, model="m", provider="p")
    assert _marker(store, third.recorder.session_id)["root_session_id"] == first
