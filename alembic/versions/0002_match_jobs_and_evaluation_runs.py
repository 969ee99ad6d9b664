"""match jobs and evaluation runs

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 17:40:00.000000
"""

import sqlalchemy as sa

from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('match_job',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('request', sa.JSON(), nullable=False),
    sa.Column('total', sa.Integer(), nullable=False),
    sa.Column('done', sa.Integer(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('match_job', schema=None) as batch_op:
        batch_op.create_index('ix_match_job_status', ['status'], unique=False)

    op.create_table('match_job_chunk',
    sa.Column('job_id', sa.String(length=36), nullable=False),
    sa.Column('seq', sa.Integer(), nullable=False),
    sa.Column('sources', sa.Integer(), nullable=False),
    sa.Column('results', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['job_id'], ['match_job.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('job_id', 'seq')
    )
    op.create_table('evaluation_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark', sa.String(length=64), nullable=True),
    sa.Column('system', sa.String(length=64), nullable=False),
    sa.Column('mode', sa.String(length=16), nullable=False),
    sa.Column('k', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.String(length=255), nullable=False),
    sa.Column('bundle_id', sa.String(length=128), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('count', sa.Integer(), nullable=False),
    sa.Column('metrics', sa.JSON(), nullable=False),
    sa.Column('overlap', sa.JSON(), nullable=False),
    sa.Column('items', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('evaluation_run', schema=None) as batch_op:
        batch_op.create_index('ix_evaluation_run_created', ['created_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('evaluation_run', schema=None) as batch_op:
        batch_op.drop_index('ix_evaluation_run_created')

    op.drop_table('evaluation_run')
    op.drop_table('match_job_chunk')
    with op.batch_alter_table('match_job', schema=None) as batch_op:
        batch_op.drop_index('ix_match_job_status')

    op.drop_table('match_job')
