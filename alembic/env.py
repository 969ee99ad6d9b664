"""Alembic environment: the URL comes from the config set by indexer.store.db or alembic.ini.

The metadata (for autogenerate) is the store's ``Base``: the indexer's tables and the app's
(``app/tables.py``). The training image, which migrates the store, holds no app: an upgrade or
downgrade needs no metadata (the migrations name their tables), so there it runs without them.
"""

from alembic import context
from indexer.settings import get_settings
from indexer.store.db import make_engine
from indexer.store.models import Base

try:
    import app.tables  # noqa: F401 - registers the app's tables on Base.metadata
except ModuleNotFoundError as missing:
    if missing.name != "app":
        raise

config = context.config
url = config.get_main_option("sqlalchemy.url") or get_settings().store.url
engine = make_engine(url)

with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
