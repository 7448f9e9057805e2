"""Many facts as a project used for months would hold them, for the ranking and RSS benches.

Fact `i` is one of 20 kinds of statement (where a service keeps its signing key, where its logs
go, which day it deploys...) about one of 49 services numbered 1 to 100 (`billing-12`), with a
few words of its own, so 100,000 facts are all distinct and a question about one of them ("Quick
question about billing-12: what do we use for its signing key?") shares words with thousands.
Each is remembered through the store's own API (`FactStore.remember` + `Runtime.check_source`,
what `lecode/facts/remember` runs: one validated, fsynced transaction a fact), citing one of 300
snapshots of one 1,000-message transcript in turn. No SQL is written behind the store.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import tempfile
from pathlib import Path

from bench.common import now
from lecode_ls.config import Settings
from lecode_ls.memory.facts.schema import SCHEMA_VERSION
from lecode_ls.memory.project import Project
from lecode_ls.memory.sessions import SourceRef, source_snapshot
from lecode_ls.runtime import Runtime, Runtimes

SERVICES = (
    "billing",
    "search",
    "auth",
    "payments",
    "ledger",
    "mailer",
    "gateway",
    "catalog",
    "inventory",
    "shipping",
    "pricing",
    "reports",
    "metrics",
    "alerts",
    "scheduler",
    "indexer",
    "crawler",
    "uploader",
    "thumbnailer",
    "transcoder",
    "notifier",
    "webhooks",
    "sessions",
    "profiles",
    "invoices",
    "refunds",
    "coupons",
    "checkout",
    "cart",
    "recommender",
    "geocoder",
    "translator",
    "exporter",
    "importer",
    "archiver",
    "backup",
    "restore",
    "audit",
    "compliance",
    "fraud",
    "risk",
    "kyc",
    "onboarding",
    "support",
    "chatbot",
    "feedback",
    "surveys",
    "analytics",
    "warehouse",
)  # 49 services
# (the fact, a question about it in other words)
KINDS = (
    ("The {s}-{n} service reads its signing key from Vault.",
     "Quick question about {s}-{n}: what do we use for its signing key?"),
    ("{s}-{n} writes its logs to Loki with a 14-day retention.",
     "Where do the logs of {s}-{n} end up?"),
    ("Deploys of {s}-{n} go out on Tuesdays after the freeze lifts.",
     "Which weekday is {s}-{n} deployed?"),
    ("The {s}-{n} database is PostgreSQL 16 on the shared cluster.",
     "What database engine backs {s}-{n}?"),
    ("{s}-{n} is owned by the platform team; page them in #ops-{s}.",
     "Who owns {s}-{n} and how do I reach them?"),
    ("The {s}-{n} health check is GET /healthz on port 8081.",
     "How do I probe whether {s}-{n} is healthy?"),
    ("{s}-{n} caches responses in Redis for five minutes.",
     "How long does {s}-{n} keep cached responses, and where?"),
    ("Secrets for {s}-{n} rotate every 90 days through the rotation job.",
     "How often are the credentials of {s}-{n} rotated?"),
    ("{s}-{n} is built with Bazel; run bazel test //{s}/... before merging.",
     "What build tool does {s}-{n} use?"),
    ("The {s}-{n} queue is RabbitMQ with a dead-letter exchange.",
     "Which message broker does {s}-{n} consume from?"),
    ("{s}-{n} exposes Prometheus metrics on /metrics.",
     "Where can I scrape the metrics of {s}-{n}?"),
    ("Feature flags for {s}-{n} live in LaunchDarkly under the {s} project.",
     "Where are the feature toggles of {s}-{n} configured?"),
    ("The {s}-{n} API is versioned in the URL path, currently /v3.",
     "What is the current API version of {s}-{n}?"),
    ("{s}-{n} runs on Kubernetes in the eu-west-1 cluster with 3 replicas.",
     "In which region and how many instances does {s}-{n} run?"),
    ("Load tests of {s}-{n} use k6 scripts in perf/{s}.",
     "How do we load-test {s}-{n}?"),
    ("{s}-{n} timeouts are 2 seconds for reads and 10 for writes.",
     "What are the request time limits of {s}-{n}?"),
    ("Backups of {s}-{n} are taken nightly at 02:00 UTC and kept 30 days.",
     "When is {s}-{n} backed up?"),
    ("The {s}-{n} on-call rotation is in PagerDuty schedule {s}-primary.",
     "Who is on call for {s}-{n}?"),
    ("{s}-{n} must not log personal data; the linter rule PII001 enforces it.",
     "Can {s}-{n} write customer emails to its logs?"),
    ("Schema migrations of {s}-{n} run with Alembic from migrations/{s}.",
     "How are database changes applied to {s}-{n}?"),
)  # fmt: skip
NUMBERS = 100
WORDS = (
    "since the incident",
    "agreed in review",
    "see the runbook",
    "per the architecture board",
    "confirmed by the team lead",
    "noted during onboarding",
    "after the migration",
    "as of this year",
)
CYCLE = len(KINDS) * len(SERVICES) * NUMBERS
MESSAGES = 1_000
RANGES = 300
SPAN = 4


def fact_text(index: int) -> str:
    """Fact `index` (0-based): distinct for every index below 100,000."""
    kind = index % len(KINDS)
    rest = index // len(KINDS)
    service, number = SERVICES[rest % len(SERVICES)], 1 + (rest // len(SERVICES)) % NUMBERS
    # The kinds, services and numbers repeat every CYCLE facts: the words of a later round are
    # shifted by one, so no two texts share a dedup key (schema.canonical_text).
    words = WORDS[(index + index // CYCLE) % len(WORDS)]
    return KINDS[kind][0].format(s=service, n=number) + f" ({words})"


def question(index: int) -> str:
    """A question about fact `index`, in other words."""
    kind = index % len(KINDS)
    rest = index // len(KINDS)
    service, number = SERVICES[rest % len(SERVICES)], 1 + (rest // len(SERVICES)) % NUMBERS
    return KINDS[kind][1].format(s=service, n=number)


def _transcript(runtime: Runtime) -> list[SourceRef]:
    rng = random.Random(7)
    words = " ".join(kind for kind, _ in KINDS).split()
    session = runtime.sessions.create("bench")
    for i in range(MESSAGES):
        content = " ".join(rng.choices(words, k=rng.randint(15, 60)))
        role = "user" if i % 2 == 0 else "assistant"
        runtime.sessions.append(session, {"kind": "message", "role": role, "content": content})
    refs = []
    for index in range(RANGES):
        start = 1 + (index * 3) % (MESSAGES - SPAN)
        refs.append(
            source_snapshot(
                runtime.sessions, session, start, start + SPAN - 1, exclusions=runtime.facts
            )
        )
    return refs


def populate(runtime: Runtime, first: int, last: int, refs: list[SourceRef]) -> float:
    """Remember facts `first` .. `last - 1`; returns seconds."""
    started = now()
    for index in range(first, last):
        runtime.facts.remember(
            fact_text(index), refs[index % len(refs)], check=runtime.check_source
        )
    return now() - started


def _cache(count: int) -> Path:
    """Where a store of `count` facts is kept between runs: the temp folder, named by this
    module's text and the schema version (a change to either builds it anew)."""
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    name = f"lecode-bench-corpus-{digest}-s{SCHEMA_VERSION}-{count}"
    return Path(tempfile.gettempdir()) / name


def cached(count: int) -> tuple[Path, float | None]:
    """A store folder (facts.sqlite3 and sessions/) of `count` facts, built the first time
    (through the store's API, as `populate`), and the seconds building it took (None: it was
    there already). 100,000 facts take minutes to remember one transaction at a time."""
    target = _cache(count)
    if (target / "facts.sqlite3").is_file():
        return target, None
    building = target.with_name(target.name + f".{os.getpid()}.tmp")
    shutil.rmtree(building, ignore_errors=True)
    project = Project(root=building / "project", slug="project-corpus000000")
    runtime = Runtime(project, building / "config", Settings())
    try:
        seconds = populate(runtime, 0, count, _transcript(runtime))
        store = runtime.store_path
    finally:
        runtime.close()
    store.replace(target)  # the store folder alone; then the rest goes
    shutil.rmtree(building, ignore_errors=True)
    return target, seconds


def install(config_dir: Path, folder: Path, count: int) -> float | None:
    """Copy a store of `count` facts into the store of the project `folder` belongs to (which
    must hold no facts yet); the seconds it took to build, when it was built now."""
    source, seconds = cached(count)
    runtimes = Runtimes(config_dir.resolve(), Settings())
    try:
        store = runtimes.for_folder(folder.resolve()).store_path
    finally:
        runtimes.close_all()
    store.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source / "facts.sqlite3", store / "facts.sqlite3")
    shutil.copytree(source / "sessions", store / "sessions", dirs_exist_ok=True)
    return seconds


def index_bytes(runtime: Runtime) -> int:
    """The bytes of the ranked index (`facts_rank`, its shadow tables and `fact_terms`), by
    SQLite's dbstat."""
    import apsw

    conn = apsw.Connection(str(runtime.facts_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        ((size,),) = conn.execute(
            "SELECT coalesce(sum(pgsize), 0) FROM dbstat "
            "WHERE name LIKE 'facts_rank%' OR name = 'fact_terms'"
        ).fetchall()
        return int(str(size))
    finally:
        conn.close()
