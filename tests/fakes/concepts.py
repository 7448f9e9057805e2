"""A tiny embedding model for the tests: words of one meaning share a dimension, a stand-in for
what a real embedding model learns (tests/live runs a real one). `FakeOpenAI.embed = concepts`
serves it at `/v1/embeddings`."""

from __future__ import annotations

MODEL = "concepts-1"
CONCEPTS = (
    ("deploy", "deploys", "release", "releases", "ship", "production", "rollout"),
    ("database", "postgres", "postgresql", "db", "tables"),
    ("money", "price", "prices", "cents", "amounts", "euros"),
    ("test", "tests", "testing", "coverage", "e2e"),
    ("log", "logs", "logging", "datadog"),
)


def concept_vector(text: str) -> list[float]:
    words = {w.strip(".,?!:;()").lower() for w in text.split()}
    vector = [float(sum(w in words for w in group)) for group in CONCEPTS]
    return [*vector, 0.1]  # never all zeros


def concepts(texts: list[str]) -> list[list[float]]:
    return [concept_vector(text) for text in texts]
