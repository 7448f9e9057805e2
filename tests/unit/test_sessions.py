"""The session store: JSONL transcripts, their offset index, undo/redo/clear, attach/delete, import.

Everything runs on real files under tmp_path. Crashes are simulated by writing what a crash leaves
(half a line, a line without its index entry) straight into the files; other processes are real
subprocesses, synchronised on their output, never on sleeps.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.errors import (
    CorruptTranscript,
    InvalidParams,
    InvalidSessionId,
    NothingToRedo,
    NothingToUndo,
    SessionAttached,
    SessionNotFound,
    StoreError,
    SymlinkRefused,
)
from lecode_ls.memory.canonical import canonical_json
from lecode_ls.memory.sessions.store import SessionInfo, SessionStore, Visibility

ID_SHAPE = re.compile(r"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")
A_VALID_ID = "20250101T120000Z-0123abcd"


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "store")


def jsonl(store: SessionStore, session_id: str) -> Path:
    return store.folder / f"{session_id}.jsonl"


def user(text: str) -> dict[str, Any]:
    return {"kind": "message", "role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"kind": "message", "role": "assistant", "content": text}


def exchange(store: SessionStore, session_id: str, question: str) -> list[int]:
    """A user message, a usage event and an assistant answer; their seqs."""
    return [
        store.append(session_id, user(question)),
        store.append(session_id, {"kind": "event", "type": "usage", "tokens": len(question)}),
        store.append(session_id, assistant("re: " + question)),
    ]


def append_raw(path: Path, data: bytes) -> None:
    with path.open("ab") as out:
        out.write(data)


class TestSessionIds:
    # covers S4: exact IDs only

    def test_a_new_session_gets_an_id_of_utc_time_and_eight_hex_digits(
        self, store: SessionStore
    ) -> None:
        session_id = store.create("first")
        assert ID_SHAPE.fullmatch(session_id)
        assert store.exists(session_id)

    @pytest.mark.parametrize(
        "text",
        [
            "",
            "../20250101T120000Z-0123abcd",
            "sessions/20250101T120000Z-0123abcd",
            "/tmp/20250101T120000Z-0123abcd.jsonl",
            "20250101T120000Z-0123abcd.jsonl",
            "20250101T120000Z-0123abc",
            "20250101T120000Z",
            "20250101T120000Z-0123ABCD",
            " 20250101T120000Z-0123abcd",
            "20250101T120000Z-0123abcd\n",
            "20250101T120000Z-0123abcd/..",
            "my chat",
            "latest",
            "..",
            None,
            20250101,
        ],
        ids=[
            "empty",
            "dotdot",
            "relative-path",
            "absolute-path",
            "file-name",
            "prefix",
            "time-only",
            "upper-hex",
            "leading-space",
            "trailing-newline",
            "path-suffix",
            "title",
            "alias",
            "bare-dotdot",
            "null",
            "number",
        ],
    )
    def test_anything_but_an_exact_id_is_refused_naming_session_id(
        self, store: SessionStore, text: Any
    ) -> None:
        with pytest.raises(InvalidSessionId, match=r"^sessionId: ") as caught:
            store.read(text, 0, 0)
        assert caught.value.field == "sessionId"
        assert caught.value.code == "invalid_session_id"

    def test_every_operation_checks_the_id(self, store: SessionStore) -> None:
        calls: list[Callable[[], object]] = [
            lambda: store.append("x", user("hi")),
            lambda: store.length("x"),
            lambda: store.exists("x"),
            lambda: store.visibility("x"),
            lambda: store.undo("x"),
            lambda: store.redo("x"),
            lambda: store.clear("x"),
            lambda: store.delete("x"),
            lambda: store.import_records([user("hi")], session_id="x"),
        ]
        for call in calls:
            with pytest.raises(InvalidSessionId):
                call()
        with pytest.raises(InvalidSessionId), store.attach("x"):
            pass

    def test_a_prefix_of_an_existing_id_finds_nothing(self, store: SessionStore) -> None:
        session_id = store.create()
        with pytest.raises(InvalidSessionId):
            store.length(session_id[:-1])
        other = session_id[:-1] + ("0" if session_id[-1] != "0" else "1")
        with pytest.raises(SessionNotFound):
            store.length(other)

    def test_an_unknown_session_is_not_found_and_leaves_no_file_behind(
        self, store: SessionStore
    ) -> None:
        store.create()
        before = sorted(p.name for p in store.folder.iterdir())
        for call in (
            lambda: store.read(A_VALID_ID, 0, 0),
            lambda: store.append(A_VALID_ID, user("hi")),
            lambda: store.delete(A_VALID_ID),
        ):
            with pytest.raises(SessionNotFound, match=r"^sessionId: "):
                call()
        with pytest.raises(SessionNotFound), store.attach(A_VALID_ID):
            pass
        assert not store.exists(A_VALID_ID)
        assert sorted(p.name for p in store.folder.iterdir()) == before


class TestTitles:
    # issue 23, item 5: an MCP client named with ESC and U+202E went verbatim into a title
    def test_unseen_characters_leave_a_title_and_it_is_bounded(self, store: SessionStore) -> None:
        session = store.create("MCP: evil\x1b[31m\u202etxt.exe\x00  " + "x" * 500)
        [info] = store.list()
        assert info.title == "MCP: evil [31m txt.exe " + "x" * 177
        assert len(info.title) == 200 and info.session_id == session

    def test_a_hand_edited_title_is_cleaned_when_listed(self, store: SessionStore) -> None:
        session = store.create("plain")
        path = jsonl(store, session)
        header, *rest = path.read_text().splitlines(keepends=True)
        path.write_text(header.replace('"plain"', '"a\\u202eb"') + "".join(rest))
        assert [i.title for i in SessionStore(store.root).list()] == ["a b"]


class TestRenameAndOrigin:
    # issue 30, item 5: sessions a person can find (renamed, and chats apart from the rest)
    def test_a_rename_is_listed_and_the_transcript_is_not_touched(
        self, store: SessionStore
    ) -> None:
        session = store.create("How do I build this?")
        before = jsonl(store, session).read_bytes()
        assert store.rename(session, "Build\u202e notes") == "Build notes"
        [info] = store.list()
        assert info.title == "Build notes"
        assert jsonl(store, session).read_bytes() == before
        assert SessionStore(store.root).list()[0].title == "Build notes"  # another window sees it

    def test_an_empty_title_gives_back_the_first_one(self, store: SessionStore) -> None:
        session = store.create("first words")
        store.rename(session, "renamed")
        assert store.rename(session, "  ") == "first words"
        assert [i.title for i in store.list()] == ["first words"]

    def test_renaming_a_missing_session_is_refused(self, store: SessionStore) -> None:
        with pytest.raises(SessionNotFound):
            store.rename(A_VALID_ID, "x")

    def test_a_deleted_session_leaves_no_title_behind(self, store: SessionStore) -> None:
        session = store.create("a")
        store.rename(session, "b")
        store.delete(session)
        assert '"' + session + '"' not in (store.folder / "titles.json").read_text()

    def test_a_damaged_titles_file_gives_back_the_first_titles(self, store: SessionStore) -> None:
        session = store.create("first")
        store.rename(session, "second")
        (store.folder / "titles.json").write_text("{not json")
        assert [i.title for i in store.list()] == ["first"]
        assert store.rename(session, "third") == "third"
        assert [i.title for i in store.list()] == ["third"]

    def test_a_linked_titles_file_is_refused(self, store: SessionStore, tmp_path: Path) -> None:
        session = store.create("a")
        elsewhere = tmp_path / "elsewhere.json"
        elsewhere.write_text("{}")
        (store.folder / "titles.json").symlink_to(elsewhere)
        with pytest.raises(SymlinkRefused):
            store.rename(session, "b")
        assert elsewhere.read_text() == "{}"

    def test_each_session_says_what_made_it(self, store: SessionStore) -> None:
        chat = store.create("How do I build?")
        editor = store.create("Remembered in the editor", origin="editor")
        mcp = store.create("MCP: claude-code", origin="mcp")
        imported, _ = store.import_records([{"role": "user", "content": "x"}], title="old.jsonl")
        exported = store.read(chat, 0, 0)
        moved, _ = store.import_records([{**exported[0], "id": A_VALID_ID}], title="moved")
        origins = {i.session_id: i.origin for i in store.list()}
        assert origins == {
            chat: "chat",
            editor: "editor",
            mcp: "mcp",
            imported: "import",
            moved: "chat",  # an exported chat, imported on another machine, is a chat
        }

    def test_sessions_made_before_origins_were_recorded_are_told_by_their_header(
        self, store: SessionStore
    ) -> None:
        made = {
            title: store.create(title)
            for title in ("Remembered in the editor", "MCP: codex", "a chat")
        }
        exported = [{"kind": "session", "id": made["a chat"], "title": "copy"}]
        imported, renamed_from = store.import_records(
            [*exported, {"kind": "message", "role": "user", "content": "x"}]
        )
        assert renamed_from == made["a chat"]
        # What an older lecode-ls wrote: no origin in the headers.
        for session in [*made.values(), imported]:
            path = jsonl(store, session)
            header, *rest = path.read_text().splitlines(keepends=True)
            path.write_text(re.sub(r',"origin":"\w+"', "", header) + "".join(rest))
            (store.folder / f"{session}.idx").unlink()
        origins = {i.title: i.origin for i in SessionStore(store.root).list()}
        assert origins == {
            "Remembered in the editor": "editor",
            "MCP: codex": "mcp",
            "a chat": "chat",
            "copy": "import",
        }


class TestAppendAndRead:
    # covers S1

    def test_seqs_are_line_indexes_and_events_sit_between_messages(
        self, store: SessionStore
    ) -> None:
        session_id = store.create("a title")
        assert exchange(store, session_id, "q1") == [1, 2, 3]
        assert store.length(session_id) == 4
        records = store.read(session_id, 0, 3)
        header = records[0]
        assert header == {
            "seq": 0,
            "kind": "session",
            "id": session_id,
            "title": "a title",
            "created": header["created"],
            "origin": "chat",
        }
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", header["created"])
        assert records[1:] == [
            {"seq": 1, "kind": "message", "role": "user", "content": "q1"},
            {"seq": 2, "kind": "event", "type": "usage", "tokens": 2},
            {"seq": 3, "kind": "message", "role": "assistant", "content": "re: q1"},
        ]
        lines = jsonl(store, session_id).read_bytes().split(b"\n")
        assert lines == [canonical_json(r) for r in records] + [b""]

    def test_ranges_are_inclusive_and_out_of_bounds_names_the_field(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        assert [r["seq"] for r in store.read(session_id, 2, 2)] == [2]
        assert [r["seq"] for r in store.read(session_id, 1, 3)] == [1, 2, 3]
        for start, end, field in [(-1, 2, "start_seq"), (2, 1, "end_seq"), (0, 4, "end_seq")]:
            with pytest.raises(InvalidParams) as caught:
                store.read(session_id, start, end)
            assert caught.value.field == field

    def test_messages_carry_openai_fields_and_metadata(self, store: SessionStore) -> None:
        session_id = store.create()
        call = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        records: list[dict[str, Any]] = [
            {"kind": "message", "role": "system", "content": None},
            {"kind": "message", "role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"kind": "message", "role": "assistant", "content": None, "tool_calls": [call]},
            {"kind": "message", "role": "tool", "tool_call_id": "call_1", "content": "ok",
             "name": "read", "meta": {"epoch": 3}},
        ]  # fmt: skip
        seqs = [store.append(session_id, record) for record in records]
        assert store.read(session_id, 1, 4) == [
            {**record, "seq": seq} for seq, record in zip(seqs, records, strict=True)
        ]

    @pytest.mark.parametrize(
        ("record", "field"),
        [
            ({"kind": "message", "role": "user", "content": "x", "seq": 9}, "record.seq"),
            ({"kind": "message", "role": "robot", "content": "x"}, "record.role"),
            ({"kind": "message", "role": "user", "content": 5}, "record.content"),
            ({"kind": "message", "role": "user", "content": [{"text": "x"}]}, "record.content[0]"),
            ({"kind": "message", "role": "tool", "content": "x"}, "record.tool_call_id"),
            ({"kind": "message", "role": "user", "tool_calls": [{}]}, "record.tool_calls"),
            ({"kind": "message", "role": "user", "meta": "x"}, "record.meta"),
            ({"kind": "message", "role": "user", "meta": {"x": float("nan")}}, "record"),
            ({"kind": "event"}, "record.type"),
            ({"kind": "event", "type": "undo", "seqs": [1]}, "record.type"),
            ({"kind": "event", "type": "clear"}, "record.type"),
            ({"kind": "session", "id": A_VALID_ID}, "record.kind"),
            ({"role": "user", "content": "no kind"}, "record.kind"),
        ],
        ids=[
            "seq",
            "role",
            "content-type",
            "content-part",
            "tool-without-call-id",
            "tool-calls-on-user",
            "meta",
            "nan",
            "event-type",
            "undo-event",
            "clear-event",
            "header",
            "no-kind",
        ],
    )
    def test_an_invalid_record_is_refused_naming_its_field_and_nothing_is_written(
        self, store: SessionStore, record: dict[str, Any], field: str
    ) -> None:
        session_id = store.create()
        before = jsonl(store, session_id).read_bytes()
        with pytest.raises(InvalidParams) as caught:
            store.append(session_id, record)
        assert caught.value.field == field
        assert caught.value.message.startswith(field + ": ")
        assert jsonl(store, session_id).read_bytes() == before


class TestTornTail:
    # covers S1: a crash mid-append leaves a torn final line; it is cut, never kept or fatal

    def test_a_final_line_without_newline_is_cut_and_appends_continue(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        intact = jsonl(store, session_id).read_bytes()
        append_raw(jsonl(store, session_id), b'{"content":"half a li')
        fresh = SessionStore(store.root)
        assert fresh.length(session_id) == 4
        assert jsonl(store, session_id).read_bytes() == intact
        assert fresh.append(session_id, user("next")) == 4
        assert fresh.read(session_id, 4, 4) == [{**user("next"), "seq": 4}]

    def test_a_final_line_that_is_not_json_is_cut_even_with_its_newline(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        intact = jsonl(store, session_id).read_bytes()
        append_raw(jsonl(store, session_id), b"\x00\x00\x00\x00\n")
        assert SessionStore(store.root).length(session_id) == 4
        assert jsonl(store, session_id).read_bytes() == intact

    def test_a_store_notices_a_tear_made_after_it_cached_the_file(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        assert store.length(session_id) == 4  # cached
        append_raw(jsonl(store, session_id), b'{"kind":"mess')
        assert store.append(session_id, user("next")) == 4
        assert [r["seq"] for r in store.read(session_id, 0, 4)] == [0, 1, 2, 3, 4]

    def test_a_line_written_before_a_crash_lost_its_index_entry_is_indexed(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        append_raw(jsonl(store, session_id), canonical_json({**user("late"), "seq": 4}) + b"\n")
        fresh = SessionStore(store.root)
        assert fresh.read(session_id, 4, 4) == [{**user("late"), "seq": 4}]
        assert (store.folder / f"{session_id}.idx").stat().st_size == 8 * 5

    def test_a_torn_index_entry_is_dropped_and_rebuilt(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        append_raw(store.folder / f"{session_id}.idx", b"\x01\x02\x03")
        fresh = SessionStore(store.root)
        assert [r["seq"] for r in fresh.read(session_id, 0, 3)] == [0, 1, 2, 3]
        assert fresh.append(session_id, user("next")) == 4


class TestDurability:
    # covers S1: an append is acknowledged only once fsynced, and a failed one leaves no trace

    def test_a_record_whose_fsync_failed_is_removed_and_its_seq_reused(
        self, store: SessionStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        session_id = store.create()
        store.append(session_id, user("kept"))
        before = jsonl(store, session_id).read_bytes()

        def failing_fsync(fd: int) -> None:
            raise OSError(5, "Input/output error")

        with monkeypatch.context() as patch:
            patch.setattr(os, "fsync", failing_fsync)
            with pytest.raises(StoreError, match="Input/output error"):
                store.append(session_id, user("lost"))
        assert jsonl(store, session_id).read_bytes() == before
        assert store.append(session_id, user("next")) == 2
        assert [r["content"] for r in store.read(session_id, 1, 2)] == ["kept", "next"]


class TestCorruption:
    # covers S1: damage before the end is reported, never skipped

    def damage_line(self, path: Path, index: int, new: bytes) -> None:
        lines = path.read_bytes().split(b"\n")
        lines[index] = new
        path.write_bytes(b"\n".join(lines))

    def test_a_bad_line_in_the_middle_is_corruption_and_the_file_is_left_alone(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        self.damage_line(jsonl(store, session_id), 2, b"{not json")
        damaged = jsonl(store, session_id).read_bytes()
        fresh = SessionStore(store.root)
        with pytest.raises(CorruptTranscript, match=r"^sessionId: .*damaged") as caught:
            fresh.read(session_id, 0, 3)
        assert caught.value.code == "corrupt_transcript"
        with pytest.raises(CorruptTranscript):
            fresh.append(session_id, user("more"))  # the index no longer matches: full scan
        assert jsonl(store, session_id).read_bytes() == damaged

    def test_same_length_damage_under_a_valid_index_is_found_when_read_and_by_verify(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        line = jsonl(store, session_id).read_bytes().split(b"\n")[2]
        self.damage_line(jsonl(store, session_id), 2, b"#" * len(line))
        fresh = SessionStore(store.root)
        assert fresh.read(session_id, 3, 3)[0]["seq"] == 3  # untouched lines still read
        with pytest.raises(CorruptTranscript):
            fresh.read(session_id, 1, 3)
        with pytest.raises(CorruptTranscript):
            fresh.verify(session_id)

    def test_a_seq_that_is_not_its_line_index_is_corruption(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        self.damage_line(jsonl(store, session_id), 2, canonical_json({**user("x"), "seq": 7}))
        with pytest.raises(CorruptTranscript, match="seq 7"):
            SessionStore(store.root).verify(session_id)

    def test_a_transcript_copied_under_another_id_is_corruption(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        jsonl(store, A_VALID_ID).write_bytes(jsonl(store, session_id).read_bytes())
        with pytest.raises(CorruptTranscript, match="header"):
            store.read(A_VALID_ID, 0, 0)
        assert store.list()[0] == SessionInfo(A_VALID_ID, "", "", 0, corrupt=True)

    def test_an_undo_pointing_at_later_records_is_corruption(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        bad = {"kind": "event", "type": "undo", "seqs": [9], "seq": 4}
        append_raw(jsonl(store, session_id), canonical_json(bad) + b"\n")
        with pytest.raises(CorruptTranscript, match="event 4"):
            SessionStore(store.root).visibility(session_id)


class TestIndex:
    # covers S1: reading a range near the end costs the same whatever the length

    def test_a_range_at_the_end_of_a_200k_record_transcript_is_read_correctly(
        self, store: SessionStore
    ) -> None:
        session_id = store.create("big")
        header = store.read(session_id, 0, 0)[0]
        total = 200_000
        lines = [canonical_json(header)]
        lines += [
            canonical_json({"seq": seq, "kind": "message", "role": "user", "content": f"m{seq}"})
            for seq in range(1, total - 1)
        ]
        lines.append(canonical_json({"seq": total - 1, "kind": "event", "type": "undo",
                                     "seqs": [total - 3, total - 2]}))  # fmt: skip
        jsonl(store, session_id).write_bytes(b"\n".join(lines) + b"\n")
        (store.folder / f"{session_id}.idx").unlink()  # the index must be rebuilt by a scan

        fresh = SessionStore(store.root)
        assert fresh.read(session_id, total - 4, total - 2) == [
            {"seq": seq, "kind": "message", "role": "user", "content": f"m{seq}"}
            for seq in range(total - 4, total - 1)
        ]
        assert (store.folder / f"{session_id}.idx").stat().st_size == 8 * total
        # A new process trusts the index: it checks the last line instead of scanning.
        again = SessionStore(store.root)
        assert again.length(session_id) == total
        assert again.visibility(session_id) == Visibility(
            frozenset({total - 3, total - 2}), None, (total - 1,)
        )
        assert again.read(session_id, 1, 1)[0]["content"] == "m1"
        assert again.append(session_id, user("after")) == total

    def test_records_are_read_at_chosen_seqs_and_a_stale_index_is_rebuilt(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q1")
        exchange(store, session_id, "q2")
        wanted = [1, 3, 4]
        expected = [store.read(session_id, seq, seq)[0] for seq in wanted]
        assert store.read_seqs(session_id, wanted) == expected
        assert store.read_seqs(session_id, []) == []
        for bad in ([3, 1], [1, 1], [1, 99]):
            with pytest.raises(InvalidParams):
                store.read_seqs(session_id, bad)
        index = store.folder / f"{session_id}.idx"
        entries = bytearray(index.read_bytes())
        entries[8:16] = entries[16:24]  # seq 1's entry points at seq 2's line
        index.write_bytes(bytes(entries))
        assert SessionStore(store.root).read_seqs(session_id, wanted) == expected

    def test_a_garbage_index_is_rebuilt_from_the_transcript(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        (store.folder / f"{session_id}.idx").write_bytes(b"\x00" * 32)
        fresh = SessionStore(store.root)
        assert [r["seq"] for r in fresh.read(session_id, 0, 3)] == [0, 1, 2, 3]


class TestSymlinks:
    # covers S4: links in the store are refused, never followed

    def test_a_symlinked_transcript_is_refused(self, store: SessionStore, tmp_path: Path) -> None:
        real = store.create()
        exchange(store, real, "q")
        jsonl(store, A_VALID_ID).symlink_to(jsonl(store, real))
        for call in (
            lambda: store.read(A_VALID_ID, 0, 0),
            lambda: store.append(A_VALID_ID, user("x")),
            lambda: store.exists(A_VALID_ID),
            lambda: store.delete(A_VALID_ID),
        ):
            with pytest.raises(SymlinkRefused, match=r"^sessionId: "):
                call()
        assert [info.session_id for info in store.list()] == [real]

    def test_a_symlinked_sessions_folder_is_refused(self, tmp_path: Path) -> None:
        elsewhere = SessionStore(tmp_path / "elsewhere")
        session_id = elsewhere.create()
        (tmp_path / "store").mkdir()
        (tmp_path / "store" / "sessions").symlink_to(elsewhere.folder)
        store = SessionStore(tmp_path / "store")
        with pytest.raises(SymlinkRefused):
            store.read(session_id, 0, 0)
        with pytest.raises(SymlinkRefused):
            store.create()
        with pytest.raises(SymlinkRefused):
            store.list()


class TestUndoRedoClear:
    # covers S5: tombstone events, never rewrites

    def test_undo_hides_the_last_exchange_with_its_events(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q1")
        second = exchange(store, session_id, "q2")
        assert store.undo(session_id) == second
        assert store.read(session_id, 7, 7) == [
            {"seq": 7, "kind": "event", "type": "undo", "seqs": second}
        ]
        assert store.visibility(session_id) == Visibility(frozenset(second), None, (7,))

    def test_undo_twice_hides_the_exchange_before_and_redo_restores_in_reverse(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        first = exchange(store, session_id, "q1")
        second = exchange(store, session_id, "q2")
        assert store.undo(session_id) == second  # seq 7
        assert store.undo(session_id) == first  # seq 8
        assert store.visibility(session_id).hidden == frozenset(first + second)
        assert store.redo(session_id) == first
        assert store.read(session_id, 9, 9)[0] == {
            "seq": 9, "kind": "event", "type": "redo", "undo_seq": 8
        }  # fmt: skip
        assert store.redo(session_id) == second
        assert store.visibility(session_id) == Visibility(frozenset(), None, ())
        with pytest.raises(NothingToRedo):
            store.redo(session_id)

    def test_an_undo_after_a_redo_hides_the_same_exchange_again(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q1")
        second = exchange(store, session_id, "q2")
        store.undo(session_id)
        store.redo(session_id)
        assert store.undo(session_id) == second

    def test_there_is_nothing_to_undo_in_a_new_session(self, store: SessionStore) -> None:
        session_id = store.create()
        with pytest.raises(NothingToUndo):
            store.undo(session_id)
        with pytest.raises(NothingToRedo):
            store.redo(session_id)

    def test_clear_starts_a_working_context_and_keeps_older_seqs_durable(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        first = exchange(store, session_id, "q1")
        clear_seq = store.clear(session_id)
        visibility = store.visibility(session_id)
        assert visibility.cleared_before == clear_seq == 4
        assert not visibility.visible(first[0], "working")
        assert visibility.visible(first[0], "durable")
        with pytest.raises(NothingToUndo):
            store.undo(session_id)  # undo stays inside the working context
        after = exchange(store, session_id, "q2")
        assert store.undo(session_id) == after
        assert store.visibility(session_id).visible(first[0], "durable")

    def test_visibility_is_rebuilt_from_the_events_by_a_fresh_store(
        self, store: SessionStore
    ) -> None:
        session_id = store.create()
        exchange(store, session_id, "q1")
        store.clear(session_id)
        second = exchange(store, session_id, "q2")
        store.undo(session_id)
        expected = Visibility(frozenset(second), 4, (8,))
        assert store.visibility(session_id) == expected
        assert SessionStore(store.root).visibility(session_id) == expected


APPENDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from lecode_ls.memory.sessions.store import SessionStore
    store = SessionStore(Path(sys.argv[1]))
    seqs = [store.append(sys.argv[2], {"kind": "message", "role": "user",
                                       "content": f"{sys.argv[3]}-{i}"}) for i in range(25)]
    print(" ".join(map(str, seqs)))
    """
)

ATTACHER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from lecode_ls.memory.sessions.store import SessionStore
    with SessionStore(Path(sys.argv[1])).attach(sys.argv[2]):
        print("attached", flush=True)
        sys.stdin.read()
    """
)


class TestConcurrency:
    # covers S1: appends are serialized per session, across threads and processes

    def check_contiguous(self, store: SessionStore, session_id: str, tags: list[str]) -> None:
        length = store.length(session_id)
        assert length == 1 + 25 * len(tags)
        records = store.read(session_id, 1, length - 1)
        assert [r["seq"] for r in records] == list(range(1, length))
        assert sorted(r["content"] for r in records) == sorted(
            f"{tag}-{i}" for tag in tags for i in range(25)
        )
        store.verify(session_id)

    def test_appends_from_threads_keep_seqs_contiguous(self, store: SessionStore) -> None:
        session_id = store.create()
        tags = [f"t{n}" for n in range(8)]
        results: dict[str, list[int]] = {}

        def work(tag: str) -> None:
            results[tag] = [store.append(session_id, user(f"{tag}-{i}")) for i in range(25)]

        threads = [threading.Thread(target=work, args=(tag,)) for tag in tags]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(s for seqs in results.values() for s in seqs) == list(range(1, 201))
        assert all(seqs == sorted(seqs) for seqs in results.values())
        self.check_contiguous(store, session_id, tags)

    def test_appends_from_processes_keep_seqs_contiguous(self, store: SessionStore) -> None:
        session_id = store.create()
        tags = [f"p{n}" for n in range(4)]
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", APPENDER, str(store.root), session_id, tag],
                stdout=subprocess.PIPE,
                text=True,
            )
            for tag in tags
        ]
        seqs = []
        for worker in workers:
            out, _ = worker.communicate(timeout=60)
            assert worker.returncode == 0
            seqs += [int(s) for s in out.split()]
        assert sorted(seqs) == list(range(1, 101))
        self.check_contiguous(SessionStore(store.root), session_id, tags)
        self.check_contiguous(store, session_id, tags)  # a store with a stale cache catches up


class TestAttachAndDelete:
    # covers S6

    def test_delete_removes_the_transcript_and_its_index(self, store: SessionStore) -> None:
        session_id = store.create()
        exchange(store, session_id, "q")
        store.delete(session_id)
        assert not store.exists(session_id)
        assert not jsonl(store, session_id).exists()
        assert not (store.folder / f"{session_id}.idx").exists()
        with pytest.raises(SessionNotFound):
            store.read(session_id, 0, 0)
        with pytest.raises(SessionNotFound):
            store.delete(session_id)

    def test_delete_is_refused_while_attached_here(self, store: SessionStore) -> None:
        session_id = store.create()
        with store.attach(session_id), store.attach(session_id):  # attach is shared
            with pytest.raises(SessionAttached, match=r"^sessionId: .*attached") as caught:
                store.delete(session_id)
            assert caught.value.code == "session_attached"
            store.append(session_id, user("still usable"))
        store.delete(session_id)
        assert not store.exists(session_id)

    def test_delete_is_refused_while_another_process_is_attached(self, store: SessionStore) -> None:
        session_id = store.create()
        with subprocess.Popen(
            [sys.executable, "-c", ATTACHER, str(store.root), session_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        ) as holder:
            assert holder.stdout is not None and holder.stdin is not None
            assert holder.stdout.readline() == "attached\n"
            with pytest.raises(SessionAttached):
                store.delete(session_id)
            holder.stdin.close()  # the holder detaches and exits
            assert holder.wait(timeout=60) == 0
        store.delete(session_id)

    def test_delete_keeps_the_lock_sidecar_and_its_inode(self, store: SessionStore) -> None:
        session_id = store.create()
        with store.attach(session_id):
            pass
        lock = store.folder / f"{session_id}.lock"
        inode = lock.stat().st_ino
        store.delete(session_id)
        assert lock.stat().st_ino == inode
        assert sorted(p.name for p in store.folder.iterdir()) == [lock.name]

    def test_a_corrupt_session_can_still_be_deleted(self, store: SessionStore) -> None:
        session_id = store.create()
        jsonl(store, session_id).write_bytes(b"garbage\nmore garbage\n")
        store.delete(session_id)
        assert not store.exists(session_id)


class TestImport:
    # covers S6

    def test_openai_messages_become_messages_after_a_new_header(self, store: SessionStore) -> None:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None,
             "tool_calls": [{"id": "c1", "type": "function",
                             "function": {"name": "ls", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "name": "ls", "content": "a.txt"},
        ]  # fmt: skip
        session_id, renamed_from = store.import_records(messages, title="imported")
        assert renamed_from is None
        assert ID_SHAPE.fullmatch(session_id)
        records = store.read(session_id, 0, 4)
        assert records[0]["title"] == "imported"
        assert "imported_from" not in records[0]
        assert records[1:] == [
            {**message, "kind": "message", "seq": seq} for seq, message in enumerate(messages, 1)
        ]

    def test_an_export_keeps_its_id_records_and_visibility(self, tmp_path: Path) -> None:
        source = SessionStore(tmp_path / "a")
        session_id = source.create("exported")
        exchange(source, session_id, "q1")
        exchange(source, session_id, "q2")
        source.undo(session_id)
        exported = source.read(session_id, 0, source.length(session_id) - 1)

        target = SessionStore(tmp_path / "b")
        assert target.import_records(exported) == (session_id, None)
        assert target.read(session_id, 0, len(exported) - 1) == exported
        assert target.visibility(session_id) == source.visibility(session_id)

    def test_a_colliding_id_is_renamed_and_the_original_left_alone(
        self, store: SessionStore
    ) -> None:
        session_id = store.create("original")
        exchange(store, session_id, "q")
        exported = store.read(session_id, 0, 3)
        before = jsonl(store, session_id).read_bytes()
        new_id, renamed_from = store.import_records(exported)
        assert renamed_from == session_id
        assert new_id != session_id and ID_SHAPE.fullmatch(new_id)
        header = store.read(new_id, 0, 0)[0]
        assert header["imported_from"] == session_id
        assert header["title"] == "original"
        assert store.read(new_id, 1, 3) == exported[1:]
        assert jsonl(store, session_id).read_bytes() == before

    def test_a_requested_id_that_is_taken_is_renamed_too(self, store: SessionStore) -> None:
        taken = store.create()
        new_id, renamed_from = store.import_records(
            [{"role": "user", "content": "x"}], session_id=taken
        )
        assert (new_id != taken, renamed_from) == (True, taken)

    @pytest.mark.parametrize(
        ("records", "field"),
        [
            ([], "records"),
            ([{"role": "user", "content": "a"}, {"role": "nobody"}], "records[1].role"),
            ([{"role": "user", "content": "a"}, "text"], "records[1]"),
            ([{"kind": "session", "id": "../x", "title": ""}], "records[0].id"),
            (
                [{"kind": "session", "id": A_VALID_ID, "seq": 0},
                 {"kind": "message", "role": "user", "content": "a", "seq": 2}],
                "records[1].seq",
            ),
            (
                [{"role": "user", "content": "a"},
                 {"kind": "session", "id": A_VALID_ID}],
                "records[1].kind",
            ),
            (
                [{"role": "user", "content": "a"},
                 {"kind": "event", "type": "undo", "seqs": [5]}],
                "records[1]",
            ),
            (
                [{"role": "user", "content": "a"},
                 {"kind": "event", "type": "redo", "undo_seq": 1}],
                "records[1]",
            ),
        ],
        ids=["empty", "role", "not-object", "header-id", "seq-gap", "late-header", "undo", "redo"],
    )  # fmt: skip
    def test_every_record_is_checked_and_errors_name_its_index(
        self, store: SessionStore, records: list[Any], field: str
    ) -> None:
        with pytest.raises((InvalidParams, InvalidSessionId)) as caught:
            store.import_records(records)
        assert caught.value.field == field
        assert not store.folder.exists() or list(store.folder.glob("*.jsonl")) == []


class TestList:
    # covers S1, S4: only this store's folder; no lookup beyond exact IDs

    def test_sessions_are_listed_oldest_first_with_title_and_length(
        self, store: SessionStore
    ) -> None:
        assert store.list() == []
        first = store.create("one")
        second, _ = store.import_records([{"role": "user", "content": "x"}], title="two")
        exchange(store, first, "q")
        (store.folder / "notes.txt").write_text("not a session")
        (store.folder / "20250101T120000Z-0123abcd.bak").write_text("not a transcript")
        infos = store.list()
        assert [(i.session_id, i.title, i.records, i.corrupt) for i in infos] == sorted(
            [(first, "one", 4, False), (second, "two", 2, False)]
        )
        assert all(ID_SHAPE.fullmatch(i.session_id) and i.created for i in infos)
