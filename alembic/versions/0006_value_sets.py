"""value sets stored through the FHIR API

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 20:10:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('value_set',
    sa.Column('id', sa.String(length=64), nullable=False),
    sa.Column('url', sa.String(length=1000), nullable=False),
    sa.Column('version', sa.String(length=64), nullable=True),
    sa.Column('resource', sa.JSON(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_value_set_url', 'value_set', ['url'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_value_set_url', table_name='value_set')
    op.drop_table('value_set')
