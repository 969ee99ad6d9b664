"""Alembic environment: the URL comes from the config set by indexer.store.db or alembic.ini."""

from alembic import context
from indexer.settings import get_settings
from indexer.store.db import make_engine
from indexer.store.models import Base

config = context.config
url = config.get_main_option("sqlalchemy.url") or get_settings().store.url
engine = make_engine(url)

with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
