"""``db.reading``: reads without a transaction, and connections given back as they came."""

from __future__ import annotations

import asyncio

import pytest
from psycopg.pq import TransactionStatus

from agent_memory_common.db.postgres import make_pool, reading


async def test_a_read_opens_no_transaction_and_the_connection_goes_back_transactional(
    pg_dsn: str,
) -> None:
    pool = make_pool(pg_dsn, max_size=1)  # one connection: the next user gets the same one
    await pool.open(wait=True)
    try:
        async with reading(pool) as conn:
            cur = await conn.execute("SELECT pg_backend_pid()")
            pid = (await cur.fetchone() or [0])[0]
            # no BEGIN was sent, so nothing is left to COMMIT: one round trip for the read
            assert conn.info.transaction_status == TransactionStatus.IDLE
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT pg_backend_pid()")
            assert (await cur.fetchone() or [0])[0] == pid
            assert not conn.autocommit  # writers elsewhere rely on their implicit transaction
            assert conn.info.transaction_status == TransactionStatus.INTRANS
    finally:
        await pool.close()


async def test_a_read_cut_short_mid_statement_never_comes_back_committing_each_statement(
    pg_dsn: str,
) -> None:
    pool = make_pool(pg_dsn, max_size=1)
    await pool.open(wait=True)
    try:
        with pytest.raises(TimeoutError):
            async with reading(pool) as conn:
                await asyncio.wait_for(conn.execute("SELECT pg_sleep(5)"), 0.2)
        async with pool.connection() as conn:  # a working one, transactional
            assert not conn.autocommit
            cur = await conn.execute("SELECT 1")
            assert await cur.fetchone() == (1,)
    finally:
        await pool.close()
