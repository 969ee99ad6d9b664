"""stored value sets as text, their decimals as given

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28 23:20:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('value_set') as batch:
        batch.alter_column('resource', type_=sa.Text(), existing_type=sa.JSON(), existing_nullable=False,
                           postgresql_using='resource::text')


def downgrade() -> None:
    with op.batch_alter_table('value_set') as batch:
        batch.alter_column('resource', type_=sa.JSON(), existing_type=sa.Text(), existing_nullable=False,
                           postgresql_using='resource::json')
