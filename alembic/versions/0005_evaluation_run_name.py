"""evaluation runs can be named

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 19:45:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('evaluation_run') as batch:
        batch.add_column(sa.Column('name', sa.String(length=100), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('evaluation_run') as batch:
        batch.drop_column('name')
