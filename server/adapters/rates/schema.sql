-- Live rates (CONTRACT §11). Idempotent: safe to run at every start.

-- The latest quote of each source for each (crypto, fiat) pair, shared by every web process.
create table if not exists rate_quotes (
  source     text        not null,
  base       text        not null,  -- crypto ticker (BTC, ETH, …)
  quote      text        not null,  -- ISO fiat code (EUR, USD, …)
  price      numeric     not null check (price > 0),  -- units of quote for one base
  fetched_at timestamptz not null,  -- when the refresher received it
  primary key (source, base, quote)
);

-- One row per source: the refresher's last round, for GET /v1/rates and for sharing the work
-- between processes (last_attempt_at is claimed atomically before a round).
create table if not exists rate_sources (
  source               text primary key,
  last_attempt_at      timestamptz,
  last_success_at      timestamptz,
  last_failure_at      timestamptz,
  last_error           text,
  consecutive_failures integer not null default 0,
  quote_count          integer not null default 0
);
