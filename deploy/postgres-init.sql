-- Run once by the postgres image when it creates its cluster (/docker-entrypoint-initdb.d/).
-- The app's pool goes through PgBouncer in transaction mode (DATABASE_POOLER=transaction), where it
-- sends no session settings: the role gets the timeouts its pool would have set (db/pool.ts), in the
-- app's database only (Temporal uses the same role in databases of its own).
ALTER ROLE notes IN DATABASE notes SET statement_timeout = '15s';
ALTER ROLE notes IN DATABASE notes SET idle_in_transaction_session_timeout = '60s';
