"""A session's usage total over LSP (C10): `lecode/chat/history` reports every call the session
ever made, each counted once, and it is the sum of the turns' and compactions' usage.

# covers C10 (issue 11, item 7)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.chat import chat_client, new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Reply, Stream, text_chunks

ZERO = {"calls": 0, "promptTokens": 0, "completionTokens": 0, "totalTokens": 0}


def added(*usages: dict[str, int]) -> dict[str, int]:
    total = {**ZERO, "unknownUsageCalls": 0}
    for usage in usages:
        for key in total:
            total[key] += usage[key]
    return total


class TestTheSessionTotal:
    async def test_history_reports_the_sum_of_every_turn_and_compaction(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI() as server:
            server.push(
                Stream(text_chunks("one", usage=(50, 5))),
                Stream(text_chunks("two", usage=(60, 6))),
                Reply(401, {"error": {"message": "bad key"}}),  # a failed call: usage unknown
                Stream(text_chunks("three", usage=(70, 7))),
                Stream(text_chunks("summary", usage=(300, 30))),  # /compact, typed in chat
            )
            client = await chat_client(start, repo, server)
            session = await new_session(client)
            history = await call(client, "lecode/chat/history", {"sessionId": session})
            assert history["usage"] == {**ZERO, "unknownUsageCalls": 0}

            results: list[dict[str, Any]] = []
            for text in ("a", "b", "c", "d"):
                sent = await call(client, "lecode/chat/send", {"sessionId": session, "text": text})
                results.append(sent["usage"])
            # /compact typed in chat reports the compaction's usage too (it reported none).
            compacted = await call(
                client, "lecode/chat/send", {"sessionId": session, "text": "/compact"}
            )
            results.append(compacted["usage"])

            history = await call(client, "lecode/chat/history", {"sessionId": session})
            assert (
                history["usage"]
                == added(*results)
                == {
                    "calls": 5,
                    "promptTokens": 480,
                    "completionTokens": 48,
                    "totalTokens": 528,
                    "unknownUsageCalls": 1,
                }
            )
