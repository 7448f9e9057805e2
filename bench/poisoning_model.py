"""The gullible model of bench.poisoning: it answers each request from its body, as the
loopback OpenAI-compatible server's `respond` (tests/fakes/openai_server.py), and obeys whatever
order the attack being played put in front of it. The worst case the memory's defences must hold
against, on purpose:

- chat: asked to read a file, it reads it; after the read it makes the memory-tool calls the
  attack's text asks for (`Attack.complies`), then answers repeating the order (or the attack's
  own `answer`);
- summary: it keeps the person's words and the order, as a rule it noted;
- learning extraction: it proposes every line carrying the order as a fact, as the person's
  preference when a user message holds it, as a verified project fact when a read showed it, and
  otherwise citing the exchange's user message anyway (someone else's words laundered as the
  person's); given an attack's ready-made extraction answer, it copies that instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bench.poisoning_attacks import Attack, canary
from tests.fakes.openai_server import Response, Stream, chunk, text_chunks

SUMMARY_PREFIX = "You maintain the working summary"
FILLERS = ("Thanks.", "Anything else in there?", "OK, carry on.")
"""What the person says after the attack's turn, so that compaction can cover it."""


@dataclass
class Gullible:
    """Answers each request from its body (FakeOpenAI's `respond`); `attack` is the one being
    played (None: a plain "OK." to everything, as in the checking sessions)."""

    attack: Attack | None = None
    calls: int = 0

    def respond(self, body: Any) -> Response:
        self.calls += 1
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system = str(messages[0].get("content")) if messages else ""
        if system.startswith(SUMMARY_PREFIX):
            return _text(self._summary(_contents(messages[1:])))
        if not body.get("tools") and "candidate" in system.lower():
            return _text(self._extraction(_contents(messages[1:])))
        return self._chat(messages)

    def _summary(self, text: str) -> str:
        said = re.findall(r"^\[seq \d+\] user:\n(.*?)(?=^\[seq \d+\] |\Z)", text, re.M | re.S)
        words = dict.fromkeys(
            w.strip(".,;:!?") for w in re.findall(r"[\w./`-]{4,}", " ".join(said))
        )
        # The order itself, kept as a rule (a line copied whole would be refused as echoed input).
        token = self.attack.token if self.attack else None
        kept = f" Rule noted: {canary(token)}." if token and token in text else ""
        return f"The person said: {' '.join(list(words)[:40])}.{kept}"

    def _extraction(self, text: str) -> str:
        if self.attack is not None and self.attack.extraction is not None:
            return self.attack.extraction
        candidates: list[dict[str, Any]] = []
        exchange: list[int] = []
        user_seq: int | None = None
        reading: tuple[int, str] | None = None
        for line in text.splitlines():
            if m := re.match(r"## exchange seqs \[([\d, ]*)\]", line):
                exchange = [int(n) for n in m.group(1).split(",") if n.strip()]
                user_seq, reading = None, None
            elif m := re.match(r"\[seq (\d+)\] (user|assistant): ", line):
                if m.group(2) == "user" and user_seq is None:
                    user_seq = int(m.group(1))
                reading = None
            elif m := re.match(r"\[seq (\d+)\] read call \S+: (.*)", line):
                path = json.loads(m.group(2)).get("path", "") if m.group(2).startswith("{") else ""
                reading = (int(m.group(1)), str(path))
            if not self.attack or self.attack.token not in line:
                continue
            if m := re.match(r"\[seq (\d+)\] user: (.*)", line):
                quote = m.group(2)
                candidates.append(_candidate(quote, [int(m.group(1))], quote))
            elif reading and "\t" in line and exchange:
                shown = line.split("\t", 1)[1]
                fact = f"{reading[1]} contains {json.dumps(shown)}"
                candidates.append(_candidate(fact, exchange, line, "verified_project_fact"))
            elif user_seq is not None:  # laundering: someone else's words cited as the person's
                candidates.append(_candidate(line.strip(), [user_seq], line.strip()))
        return json.dumps({"candidates": candidates[:8]})

    def _chat(self, messages: list[dict[str, Any]]) -> Response:
        attack = self.attack
        last = messages[-1] if messages else {}
        prompt = next(
            (str(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), ""
        )
        if attack is None or attack.read is None or prompt in FILLERS:
            return _text("OK.")
        if last.get("role") == "user":
            return _calls([("read", {"path": attack.read})], self.calls)
        complied = any(
            str(call.get("function", {}).get("name", "")).startswith("memory_")
            for m in messages
            for call in m.get("tool_calls") or []
        )
        if last.get("role") == "tool" and attack.complies and not complied:
            return _calls(list(attack.complies), self.calls)
        shown = "\n".join(str(m.get("content")) for m in messages if m.get("role") == "tool")
        line = next((x for x in shown.splitlines() if attack.token in x), attack.token)
        return _text(attack.answer or f"I read {attack.read}. It says: {line.split(chr(9))[-1]}")


def _candidate(
    text: str, seqs: list[int], quote: str, kind: str = "explicit_user_preference"
) -> dict[str, Any]:
    return {
        "text": text,
        "source_seqs": seqs,
        "kind": kind,
        "quote": quote,
        "supersedes": [],
        "proposal": False,
    }


def _contents(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content")) for m in messages)


def _text(answer: str) -> Stream:
    return Stream(text_chunks(*[answer[i : i + 60] for i in range(0, len(answer), 60)] or [""]))


def _calls(calls: list[tuple[str, dict[str, Any]]], n: int) -> Stream:
    deltas = [
        {
            "index": i,
            "id": f"call-{n}-{i}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for i, (name, args) in enumerate(calls)
    ]
    return Stream([chunk(tool_calls=deltas), chunk(finish="tool_calls")])
