"""One settings model for indexer and app, read from ``TERMSEARCH_*`` environment variables.

Nested sections use ``__``: ``TERMSEARCH_STORE__URL``, ``TERMSEARCH_VECTOR__KIND``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class StoreSettings(BaseModel):
    # Empty means SQLite at ``{data_dir}/termsearch.db``.
    url: str = ""


class EncoderSettings(BaseModel):
    # A model directory (model.onnx, tokenizer.json, model_manifest.json). Empty means the
    # default model, exported once into ``{data_dir}/models``.
    model_dir: str = ""
    threads: int = Field(default=0, ge=0, description="ONNX Runtime intra-op threads; 0 = all cores")
    batch_size: int = Field(default=64, ge=1)
    max_length: int = Field(default=64, ge=8, le=512)


class VectorSettings(BaseModel):
    # Exact search defaults to numpy: one BLAS matrix-vector product over the system's label
    # slice uses every core (5 ms for ICD-10-CM's 111k labels here), where FAISS's exact path
    # answers one query on one thread (15 ms). FAISS serves the HNSW option (bench/RESULTS.md).
    backend: Literal["faiss", "numpy"] = "numpy"
    kind: Literal["flat", "hnsw"] = "flat"
    hnsw_m: int = 32
    hnsw_ef_search: int = 128
    # HNSW misses results when a filter keeps few vectors; ranges this small are searched exactly.
    hnsw_exact_below: int = 20_000


class LexicalSettings(BaseModel):
    backend: Literal["tantivy"] = "tantivy"


class SearchSettings(BaseModel):
    max_k: int = 100
    max_query_length: int = 512
    rrf_k: int = 60
    # Hybrid fuses the top ``max(k, fusion_depth)`` concepts of each retriever.
    fusion_depth: int = 50
    # How many label hits to fetch per wanted concept before grouping labels into concepts.
    label_oversample: int = 4
    # Dense requests encoding and scanning at once. Each already uses every core (ONNX Runtime
    # and BLAS threads), so more at once only thrashes: 1 measured best on 2 cores.
    dense_slots: int = Field(default=1, ge=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TERMSEARCH_", env_nested_delimiter="__", env_file=".env", extra="ignore"
    )

    data_dir: Path = Path("var")
    store: StoreSettings = StoreSettings()
    encoder: EncoderSettings = EncoderSettings()
    vector: VectorSettings = VectorSettings()
    lexical: LexicalSettings = LexicalSettings()
    search: SearchSettings = SearchSettings()

    @model_validator(mode="after")
    def _fill_defaults(self) -> Settings:
        if not self.store.url:
            self.store.url = f"sqlite:///{self.data_dir / 'termsearch.db'}"
        return self

    @property
    def bundles_dir(self) -> Path:
        return self.data_dir / "bundles"

    @property
    def models_dir(self) -> Path:
        return self.data_dir / "models"


@lru_cache
def get_settings() -> Settings:
    return Settings()
