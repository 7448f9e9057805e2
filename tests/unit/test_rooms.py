"""The features' rooms (server/rooms.py) and the wiring that adds them (wiring.ROOMS): what each
feature keeps, runs and listens for, held by a server that names no feature.

# covers issue 43, item 2 (server/ untied); K3 (shutdown stops the work under way); P3 (a facts
# change reaches every listener before the client hears of it)
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest

from lecode_ls.server.anchors.state import AnchorView
from lecode_ls.server.chat.state import Chat
from lecode_ls.server.facts.watch import FactsSeen
from lecode_ls.server.questions.state import Questions
from lecode_ls.server.rooms import Room, Rooms
from lecode_ls.server.server import LecodeServer
from lecode_ls.server.sessions.state import Followed
from lecode_ls.server.wiring import collect


class Recorder:
    """Listeners that write down what they heard, in order."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, str, Any]] = []

    def room(self, name: str, state: object | None = None) -> Room:
        async def opened(runtime: Any) -> None:
            self.heard.append((name, "opened", runtime))

        async def facts_changed(runtime: Any) -> None:
            self.heard.append((name, "facts_changed", runtime))

        async def closed(roots: Collection[str]) -> None:
            self.heard.append((name, "closed", sorted(roots)))

        async def shutdown() -> None:
            self.heard.append((name, "shutdown", None))

        return Room(
            name,
            state=state,
            opened=opened,
            facts_changed=facts_changed,
            closed=closed,
            shutdown=shutdown,
        )


class TestRooms:
    def test_a_state_is_found_by_its_class(self) -> None:
        rooms = Rooms()
        questions = Questions()
        rooms.add(Room("questions", state=questions))
        assert rooms.get(Questions) is questions

    def test_a_state_no_room_keeps_is_a_lookup_error_naming_it(self) -> None:
        rooms = Rooms()
        assert not rooms.collected
        with pytest.raises(LookupError, match="no room keeps a Chat"):
            rooms.get(Chat)

    def test_two_rooms_cannot_keep_one_class_of_state(self) -> None:
        rooms = Rooms()
        rooms.add(Room("one", state=Questions()))
        with pytest.raises(ValueError, match="two rooms keep a Questions"):
            rooms.add(Room("two", state=Questions()))

    async def test_listeners_are_called_in_the_order_the_rooms_were_added(self) -> None:
        recorder = Recorder()
        rooms = Rooms()
        rooms.add(recorder.room("first"))
        rooms.add(Room("quiet"))  # listens to nothing
        rooms.add(recorder.room("second"))
        await rooms.opened("runtime")
        await rooms.facts_changed("runtime")
        await rooms.closed({"/b", "/a"})
        await rooms.shutdown()
        assert recorder.heard == [
            ("first", "opened", "runtime"),
            ("second", "opened", "runtime"),
            ("first", "facts_changed", "runtime"),
            ("second", "facts_changed", "runtime"),
            ("first", "closed", ["/a", "/b"]),
            ("second", "closed", ["/a", "/b"]),
            ("first", "shutdown", None),
            ("second", "shutdown", None),
        ]


class TestTheWiring:
    async def test_it_adds_every_features_room_once(self, tmp_path: Path) -> None:
        ls = LecodeServer(tmp_path)
        collect(ls)
        states = [ls.rooms.get(kind) for kind in (Questions, FactsSeen, AnchorView, Chat, Followed)]
        collect(ls)  # the first request and `initialized` both collect: the second adds nothing
        assert [ls.rooms.get(type(state)) for state in states] == states
        assert [name for name, _ in ls.rooms.tasks()] == [
            "watch-team",
            "watch-facts",
            "watch-checkouts",
            "follow-agents",
        ]

    async def test_shutdown_answers_every_open_question_no(self, tmp_path: Path) -> None:
        ls = LecodeServer(tmp_path)
        collect(ls)
        question = ls.rooms.get(Questions).open(
            "forget?", "Forget", "Cancel", "y", "n", in_editor=False
        )
        await ls.stop_work()
        assert (ls.closing, question.answer.result()) == (True, False)
