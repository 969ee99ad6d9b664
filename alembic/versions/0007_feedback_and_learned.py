"""feedback events and learned knowledge

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28 22:20:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('feedback_event',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('surface', sa.String(length=16), nullable=False),
    sa.Column('action', sa.String(length=16), nullable=False),
    sa.Column('query', sa.Text(), nullable=False),
    sa.Column('query_key', sa.String(length=512), nullable=False),
    sa.Column('system', sa.String(length=64), nullable=True),
    sa.Column('scope', sa.JSON(), nullable=True),
    sa.Column('code', sa.String(length=64), nullable=True),
    sa.Column('rank', sa.Integer(), nullable=True),
    sa.Column('shown', sa.Integer(), nullable=True),
    sa.Column('label', sa.Text(), nullable=True),
    sa.Column('wrong', sa.String(length=16), nullable=True),
    sa.Column('reason', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_feedback_event_at', 'feedback_event', ['at'], unique=False)
    op.create_index('ix_feedback_event_key', 'feedback_event', ['action', 'query_key'], unique=False)
    op.create_table('learned',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('system', sa.String(length=64), nullable=False),
    sa.Column('code', sa.String(length=64), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('key', sa.String(length=512), nullable=False),
    sa.Column('lent_by', sa.Text(), nullable=True),
    sa.Column('decision', sa.String(length=16), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('reviewer', sa.String(length=100), nullable=False),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_learned_item', 'learned', ['kind', 'system', 'code', 'key'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_learned_item', table_name='learned')
    op.drop_table('learned')
    op.drop_index('ix_feedback_event_key', table_name='feedback_event')
    op.drop_index('ix_feedback_event_at', table_name='feedback_event')
    op.drop_table('feedback_event')
