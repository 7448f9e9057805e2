"""`[memory] max_bytes` caps the whole memory section a chat request carries, its heading
included (I2), as the model receives it.

# covers I2 (issue 11, item 7)
"""

from __future__ import annotations

from pathlib import Path

from tests.e2e.chat import new_session
from tests.e2e.conftest import Start, call
from tests.fakes.openai_server import FakeOpenAI, Stream, text_chunks

HEADING = "# Project memory"


class TestTheCap:
    async def test_the_memory_section_with_its_heading_fits_max_bytes(
        self, start: Start, repo: Path
    ) -> None:
        async with FakeOpenAI(respond=lambda body: Stream(text_chunks("ok"))) as server:
            options = {
                "provider": {"base_url": server.base_url, "model": "gpt-4o", "api_key_env": ""},
                "memory": {"max_bytes": 400},
            }
            client = await start(repo, options=options)
            await call(client, "lecode/memory/write", {"file": "MEMORY.md", "content": "m" * 5000})
            session = await new_session(client)
            await call(client, "lecode/chat/send", {"sessionId": session, "text": "Hi"})
            system = server.bodies[0]["messages"][0]["content"]
            # The memory section is the system message's last part, from its heading on.
            section = system[system.index(HEADING) :]
            assert section.endswith("[... MEMORY.md truncated to fit [memory] max_bytes]\n")
            assert 400 - 5 <= len(section.encode("utf-8")) <= 400
