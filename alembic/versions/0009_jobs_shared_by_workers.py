"""jobs shared by worker processes: benchmark jobs stored, match and benchmark jobs leased

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29 10:00:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('match_job') as batch:
        batch.add_column(sa.Column('holder', sa.String(length=64), nullable=True))
        batch.add_column(sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True))
    op.create_table('benchmark_job',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('benchmark', sa.String(length=64), nullable=False),
    sa.Column('mode', sa.String(length=16), nullable=False),
    sa.Column('k', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=True),
    sa.Column('done', sa.Integer(), nullable=False),
    sa.Column('total', sa.Integer(), nullable=True),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('holder', sa.String(length=64), nullable=True),
    sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index('ix_benchmark_job_status', 'benchmark_job', ['status'], unique=False)
    op.create_index('ix_benchmark_job_created', 'benchmark_job', ['created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_benchmark_job_created', table_name='benchmark_job')
    op.drop_index('ix_benchmark_job_status', table_name='benchmark_job')
    op.drop_table('benchmark_job')
    with op.batch_alter_table('match_job') as batch:
        batch.drop_column('heartbeat_at')
        batch.drop_column('holder')
