"""What the server holds of its features: one registry, which the wiring fills.

server.py knows no feature. Each feature of server/ that keeps something between messages, runs
in the background or answers an event says so in a `Room` (`anchors/room.py`, `chat/room.py`
...): its state (one object, found again by its class: `ls.rooms.get(Chat)`), its background
tasks, and its listeners (a project's runtime opened, its facts changed, projects closed, the
server shutting down). wiring.collect gathers every room here, in the order wiring.ROOMS lists
them; that is the order in which listeners are called and tasks started. (swyddfa/esbonio's
`get_feature` is the same idea: the server finds a feature by its type, and does not name it.)

Nothing here imports pydantic: a server may create its registry before `initialize` (a
`shutdown` or a folder change, which find it empty).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from lecode_ls.runtime import Runtime

T = TypeVar("T")

RuntimeListener = Callable[["Runtime"], Awaitable[None]]
"""Called with a project's runtime (it opened, or its facts changed)."""


@dataclass(frozen=True)
class Room:
    """What one feature brings to the server. Every field may be left out."""

    name: str
    state: object | None = None
    """The feature's state between messages; other rooms find it by its class (`Rooms.get`)."""
    tasks: Mapping[str, Callable[[], Coroutine[Any, Any, None]]] = field(default_factory=dict)
    """Background tasks by name, started once `initialized` arrives (`LecodeServer.run_task`:
    held, logged on failure, cancelled at shutdown)."""
    opened: RuntimeListener | None = None
    """A project's runtime was just created, before the request that needed it goes on."""
    facts_changed: RuntimeListener | None = None
    """A project's facts changed, here or in another process (server/facts/watch.py calls it
    before the client hears of it)."""
    closed: Callable[[Collection[str]], Awaitable[None]] | None = None
    """The projects at these roots are being closed (no open folder uses them); their stores
    close once every room has returned."""
    shutdown: Callable[[], Awaitable[None]] | None = None
    """The client sent `shutdown`: stop the work under way, before background tasks are
    cancelled and the stores closed."""


class Rooms:
    """Every feature's room, in the order they were added."""

    def __init__(self) -> None:
        self._rooms: list[Room] = []
        self._states: dict[type, object] = {}

    @property
    def collected(self) -> bool:
        """Whether the wiring has added the rooms (wiring.collect: when `initialized` arrives,
        or with the first request if a client sends one before that)."""
        return bool(self._rooms)

    def add(self, room: Room) -> None:
        if room.state is not None:
            kind = type(room.state)
            if kind in self._states:
                raise ValueError(f"two rooms keep a {kind.__name__}")
            self._states[kind] = room.state
        self._rooms.append(room)

    def get(self, kind: type[T]) -> T:
        """The state of class `kind` that a room keeps."""
        state = self._states.get(kind)
        if state is None:
            raise LookupError(f"no room keeps a {kind.__name__} (wiring.collect has not run)")
        assert isinstance(state, kind)
        return state

    def tasks(self) -> list[tuple[str, Callable[[], Coroutine[Any, Any, None]]]]:
        return [(name, start) for room in self._rooms for name, start in room.tasks.items()]

    async def opened(self, runtime: Runtime) -> None:
        for room in self._rooms:
            if room.opened is not None:
                await room.opened(runtime)

    async def facts_changed(self, runtime: Runtime) -> None:
        for room in self._rooms:
            if room.facts_changed is not None:
                await room.facts_changed(runtime)

    async def closed(self, roots: Collection[str]) -> None:
        for room in self._rooms:
            if room.closed is not None:
                await room.closed(roots)

    async def shutdown(self) -> None:
        for room in self._rooms:
            if room.shutdown is not None:
                await room.shutdown()
