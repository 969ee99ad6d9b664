"""The app's settings: the indexer's (``indexer/settings.py``) and the sections only the app reads.

Read from the same ``TERMSEARCH_*`` environment variables: ``TERMSEARCH_SEARCH__MAX_K``,
``TERMSEARCH_API__AUTH_ENABLED``.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from pydantic import BaseModel, Field, SecretStr, model_validator

from indexer.settings import Settings as IndexerSettings
from indexer.settings import load_settings


class SearchSettings(BaseModel):
    max_k: int = 100
    max_query_length: int = 512
    # The ranking core takes the top ``max(k, fusion_depth)`` concepts of each channel (dense,
    # BM25, character n-grams) as candidates, then orders them by calibrated confidence.
    fusion_depth: int = 50
    # The documented default threshold: a filtered $expand lists only concepts at or above it
    # (and /search, /similar, /match when a caller passes it as min_confidence). Chosen in
    # bench/bench_ranking.py so that nonsense and off-topic queries return nothing: 0.3 before the
    # confidence was recalibrated on real queries, 0.502 its image since (the same rows pass;
    # bench/bench_recalibration.py).
    confidence_threshold: float = Field(default=0.502, ge=0, le=1)
    # How many label hits to fetch per wanted concept before grouping labels into concepts (four
    # times as many are fetched while too few concepts come back). 3: HPO's 2.8 labels a concept
    # rarely need that second, wider HNSW search (at 2 one in three did): 0.5 ms a query less, and
    # the top rows of the everyday and keystroke rankings as at 2 but one 3-letter prefix.
    label_oversample: int = Field(default=3, ge=1)
    # Threads a worker encodes queries and searches the vector index on (a text's encoding then
    # its vector search, one job), beside the request's thread. An encoding already uses every
    # core (ONNX Runtime's threads), so more at once only thrashes: 1 measured best on 2 cores.
    dense_slots: int = Field(default=1, ge=1)
    # Search through another loaded terminology's concept when the query is exactly one of its
    # names ("heart attack" in ICD-10-CM via HPO's Myocardial infarction); see app/search/service.py.
    bridges: bool = True
    # Read the query by the clinical query grammar (app/search/grammar.py): shorthand, sides,
    # history and status, spinal levels, pregnancy weeks; each rewrite shown in a row's ``why``.
    grammar: bool = True
    # Hybrid: a first row more specific than the query says (named as its parent with words the query
    # does not hold, as "Mild microcephaly" for "her head is small") gives the first place to its parent when
    # the parent ranks within this much confidence of it, on the ranker's own scale (before the
    # recalibration step: Calibration.own_scale; app/search/descent.py); 0: off. Systems
    # without billable codes (HPO): ICD-10-CM's codes are chosen by the descent. 0.1 measured best
    # on the built-in HPO lay and synonym benchmarks (bench/RESULTS.md, "Ascent to the parent").
    ascent_margin: float = Field(default=0.1, ge=0, le=1)
    # The details a query states (side, encounter, numbers, with/without: app/search/details.py) are
    # weighed for the candidates whose labels score within this many logits of the best's and for
    # their kin (two is-a steps up: a child, grandchild or cousin of one), so that they choose among near siblings and never
    # lift a concept that agrees by its side alone (app/search/features.py; bench_detail_margin.py).
    detail_margin: float = Field(default=0.5, ge=0)
    # Rankings kept per worker, least recently used dropped (a bundle's own: a new bundle starts
    # empty): a repeated query (a form re-asking, a keystroke typed back) is answered from it.
    # 0 = none (benchmarks of the computation set it).
    ranking_cache: int = Field(default=4096, ge=0)


class FhirSettings(BaseModel):
    """Limits of the FHIR terminology operations under ``/fhir``."""

    # Largest ``count`` of one $expand page; an expansion without ``count`` that would list more
    # codes than this is refused as too costly (page it with ``count`` and ``offset``).
    max_count: int = Field(default=1000, ge=1)
    # A filtered $expand is the ranked top ``filter_depth`` concepts (its ``total``); pages are
    # slices of that one ranking, so they concatenate to it.
    filter_depth: int = Field(default=100, ge=1)
    # Vocabulary words a partly typed last word is completed to on the lexical side.
    prefix_completions: int = Field(default=8, ge=0)
    # Semantic (dense) candidates per $translate, besides the stored mappings.
    translate_candidates: int = Field(default=5, ge=0)
    # The public FHIR base (https://tx.example.org/fhir) named by /fhir/metadata; never taken
    # from the request's Host header. None: the CapabilityStatement names no url.
    base_url: str | None = None
    # A ValueSet compose is costed before any work starts, at each level of nesting; past a
    # limit it is refused as too costly (422 too-costly naming the limit).
    max_compose_parts: int = Field(default=200, ge=1, description="includes and excludes of one compose")
    max_compose_imports: int = Field(default=32, ge=1, description="valueSet imports of one compose, all parts")
    max_compose_filters: int = Field(default=200, ge=1, description="filters of one compose, all parts")
    max_compose_concepts: int = Field(default=20_000, ge=1, description="listed concepts of one compose, all parts")
    max_regex_length: int = Field(default=256, ge=1, description="longest regex filter pattern")
    # Validations of one ValueSet/$batch-validate, counted before any is answered; past it the batch
    # is refused as too costly (422 too-costly naming the limit).
    max_batch_validations: int = Field(default=500, ge=1, description="validation entries of one $batch-validate")


class MatchSettings(BaseModel):
    """Limits of batch matching (``/match``, ``/match/jobs``) and of ``/evaluate``."""

    max_sync_sources: int = Field(default=1000, ge=1, description="larger batches must run as a job")
    max_job_sources: int = Field(default=200_000, ge=1)
    max_labels_per_source: int = Field(default=50, ge=1)
    max_k: int = Field(default=20, ge=1)
    # Sources matched per job step; progress (and the step's results) is saved after each.
    job_chunk: int = Field(default=128, ge=1)
    max_eval_items: int = Field(default=5000, ge=1)
    # Jobs waiting at once, per kind (benchmark runs, match jobs); one more is refused with 429
    # and Retry-After, so a client cannot queue hours of work.
    max_queued_jobs: int = Field(default=8, ge=1)


class FeedbackSettings(BaseModel):
    """Learning from use (``app/feedback``, docs/OPERATIONS.md): what users choose and flag,
    reviewed by a curator. Events may hold clinical text (the queries typed)."""

    enabled: bool = Field(default=True, description="off: /feedback and /review answer 404 and nothing is stored")
    retention_days: int = Field(default=90, ge=1, description="events older than this are purged (at start, daily)")
    # A phrasing is proposed once users chose one concept for it this many times (at a rank
    # other than first, or where nothing was shown first).
    min_choices: int = Field(default=3, ge=1)
    max_queue: int = Field(default=200, ge=1, description="items of each kind the review queue lists")


PLACEHOLDER_KEY = "change-me-to-a-long-random-key"  # the example key in .env.example: refused


def usable_cpus() -> int:
    """The cores this process may run on (its CPU affinity, e.g. a container's cpuset), where the
    platform says; else every core."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class ApiSettings(BaseModel):
    """How the HTTP API protects itself (docs/OPERATIONS.md). Defaults: auth and rate limiting off."""

    max_body_bytes: int = Field(default=1 << 20, ge=1024, description="larger request bodies get 413")
    request_timeout_s: float = Field(default=30.0, gt=0, description="then 503 /problems/timeout")
    auth_enabled: bool = False
    # Comma-separated; a request presents one as ``X-API-Key`` or ``Authorization: Bearer``.
    api_keys: SecretStr = SecretStr("")
    # Curators' keys, comma-separated ``name=key`` (the name is recorded with each decision in
    # /review): a curator key is an API key too, and the only one that may decide.
    curator_keys: SecretStr = SecretStr("")
    # Paths answered without a key (exact match): probes and the API docs.
    public_paths: list[str] = ["/health", "/ready", "/docs", "/docs/oauth2-redirect", "/openapi.json", "/redoc"]
    # Token bucket per client (its API key, else its address): refill per second, bucket size.
    rate_limit_per_s: float = Field(default=0.0, ge=0, description="0 = no rate limiting")
    rate_limit_burst: int = Field(default=100, ge=1)
    # Wrong keys per client and key (address and the key sent): a bucket of ``auth_failure_burst``
    # refilled at ``auth_failures_per_s``; once empty, that key from that address gets 429 until
    # it refills (the right key from the same address still passes).
    auth_failures_per_s: float = Field(default=1.0, gt=0)
    auth_failure_burst: int = Field(default=10, ge=1)
    # Wrong keys from every client together: once this bucket is empty, only addresses that
    # presented a right key in the last ``auth_trust_s`` seconds have their keys compared.
    auth_failures_global_per_s: float = Field(default=20.0, gt=0)
    auth_failure_global_burst: int = Field(default=200, ge=1)
    auth_trust_s: float = Field(default=3600.0, gt=0)
    # uvicorn worker processes (python -m app): one per usable core by default, since a worker is
    # held to about one core by the GIL under concurrent load; they share the bundle's mapped files
    # and the store (jobs), and each has its own memory, limits and counters (docs/OPERATIONS.md).
    workers: int = Field(default_factory=usable_cpus, ge=1)
    # uvicorn (python -m app): connections open at once (then 503), seconds to drain on shutdown,
    # seconds a kept-alive connection may stay silent, seconds a connection has to send a
    # request's headers (from when it opens, and after each response), pending connections.
    limit_concurrency: int = Field(default=1000, ge=1)
    graceful_shutdown_s: int = Field(default=30, ge=0)
    keep_alive_s: int = Field(default=5, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0)
    # Connections one client address may hold open at once (per process); past it a new one is
    # answered 429 and closed. 0 = no cap (behind a proxy every client has the proxy's address:
    # cap per client at the proxy instead).
    max_connections_per_client: int = Field(default=100, ge=0)
    backlog: int = Field(default=2048, ge=1)
    # How often the app looks at ``bundles/current`` for a new bundle; 0 = only at start-up.
    bundle_check_s: float = Field(default=5.0, ge=0)
    # Browser origins (``https://forms.example.org``) that may call the API from their pages
    # (CORS, without credentials); ["*"]: any origin; []: none (no CORS headers).
    cors_origins: list[str] = ["*"]

    @model_validator(mode="after")
    def _keys_when_enabled(self) -> ApiSettings:
        if self.auth_enabled and not self.keys:
            raise ValueError("api.auth_enabled needs TERMSEARCH_API__API_KEYS")
        if any(len(key) < 16 for key in self.keys):
            raise ValueError("every API key needs at least 16 characters")
        curators = [entry for entry in self.curator_keys.get_secret_value().split(",") if entry.strip()]
        if any(not re.fullmatch(r"\s*[\w.@-]{1,100}=\S+\s*", entry) for entry in curators):
            raise ValueError("TERMSEARCH_API__CURATOR_KEYS: each entry is name=key (name: letters, digits, . _ @ -)")
        if self.auth_enabled and PLACEHOLDER_KEY in self.keys:
            raise ValueError(
                f"TERMSEARCH_API__API_KEYS holds the placeholder {PLACEHOLDER_KEY!r} from .env.example; "
                "set a random key (openssl rand -hex 32)"
            )
        bad = [o for o in self.cors_origins if o != "*" and not re.fullmatch(r"https?://[^/?#\s]+", o)]
        if bad:
            raise ValueError(f"TERMSEARCH_API__CORS_ORIGINS: {bad[0]!r} is not an origin (scheme://host[:port], no path) or *")
        return self

    @property
    def keys(self) -> list[str]:
        """Every key that may call: the API keys and the curators'."""
        api = [key.strip() for key in self.api_keys.get_secret_value().split(",") if key.strip()]
        return api + list(self.curators.values())

    @property
    def curators(self) -> dict[str, str]:
        """Curator name -> key."""
        pairs = (entry.strip().partition("=") for entry in self.curator_keys.get_secret_value().split(","))
        return {name: key for name, _, key in pairs if name and key}


class Settings(IndexerSettings):
    """Everything the app reads: the indexer's settings (the store, the bundle's indexes) and its own."""

    search: SearchSettings = SearchSettings()
    fhir: FhirSettings = FhirSettings()
    match: MatchSettings = MatchSettings()
    api: ApiSettings = ApiSettings()
    feedback: FeedbackSettings = FeedbackSettings()


@lru_cache
def get_settings() -> Settings:
    """The app's settings from the environment (ConfigurationError as :func:`indexer.settings.load_settings`)."""
    return load_settings(Settings)
