"""designation origin and knowledge source

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24 16:00:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('designation') as batch:
        batch.add_column(sa.Column('origin', sa.Text(), nullable=True))
        batch.add_column(sa.Column('knowledge', sa.String(length=128), nullable=True))
        batch.create_index('ix_designation_knowledge', ['knowledge'])


def downgrade() -> None:
    with op.batch_alter_table('designation') as batch:
        batch.drop_index('ix_designation_knowledge')
        batch.drop_column('knowledge')
        batch.drop_column('origin')
