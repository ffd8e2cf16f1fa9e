-- The UTXO engine's own tables (BTC, LTC, BCH share them, keyed by network). Idempotent: safe to
-- run at every start. Amounts are base units (satoshis / litoshis) in bigint.

-- Where the block scanner stands: the last block processed on what was then the best chain.
create table if not exists utxo_cursor (
  network text primary key,
  height integer not null,
  hash text not null,
  updated_at timestamptz not null default now()
);

-- The hashes of recently processed blocks, to find the fork point when the node's chain changes.
create table if not exists utxo_blocks (
  network text not null,
  height integer not null,
  hash text not null,
  primary key (network, height)
);

-- Every address derived from the account xpub and watched. branch 0 = deposit, 1 = change/treasury.
create table if not exists utxo_addresses (
  network text not null,
  branch smallint not null check (branch in (0, 1)),
  idx integer not null check (idx >= 0),
  address text not null,
  script text not null,
  -- an output has paid it (the gap rule counts from the highest used index)
  used boolean not null default false,
  primary key (network, branch, idx),
  unique (network, script)
);

-- Every output paying a watched address: deposits (branch 0) and Kassa's own change. Also the
-- spendable set of the wallet. One row per (network, txid, vout): nothing is counted twice.
create table if not exists utxo_outputs (
  network text not null,
  txid text not null,
  vout integer not null,
  branch smallint not null,
  idx integer not null,
  address text not null,
  script text not null,
  amount bigint not null check (amount > 0),
  from_address text not null default '',
  -- inputs − outputs of the transaction; null for a coinbase
  fee bigint,
  -- the best-chain block holding the transaction, null while unconfirmed or after a reorg
  block_hash text,
  block_height integer,
  -- SEEN until credited at depth (CONFIRMED) or gone (DROPPED); CONFIRMED and DROPPED are final
  state text not null default 'SEEN' check (state in ('SEEN', 'CONFIRMED', 'DROPPED')),
  -- a CONFIRMED output whose block later left the best chain: for operator review
  reorged_after_credit boolean not null default false,
  -- the transaction spending it (a payout of Kassa's, or seen on chain)
  spent_by text,
  -- what the sink last acknowledged (at-least-once delivery, idempotent at the sink)
  reported_state text,
  reported_confirmations integer,
  first_seen_at timestamptz not null default now(),
  primary key (network, txid, vout)
);
create index if not exists utxo_outputs_open on utxo_outputs (network) where state = 'SEEN';
create index if not exists utxo_outputs_unspent on utxo_outputs (network) where spent_by is null and state <> 'DROPPED';

-- Payouts: the signed raw transaction is stored before it is broadcast, and only ever rebroadcast.
create table if not exists utxo_payouts (
  network text not null,
  id text not null,
  to_address text not null,
  amount bigint not null check (amount > 0),
  txid text not null,
  raw_tx text not null,
  fee bigint not null,
  fee_rate numeric not null,
  change_index integer,
  inputs jsonb not null,
  broadcast_at timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  primary key (network, id),
  unique (network, txid)
);
