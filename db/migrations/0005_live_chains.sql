ALTER TABLE "payments" ADD COLUMN "address_index" bigint;
--> statement-breakpoint
-- Live BTC, LTC and BCH number their deposit addresses apart (each xpub's /0/i stays dense, within a wallet's gap limit); EVM keeps the shared sequence, so ETH and BSC (one xpub) never hand out one address twice.
CREATE SEQUENCE IF NOT EXISTS "deposit_address_index_btc" START WITH 1 MINVALUE 1;
--> statement-breakpoint
CREATE SEQUENCE IF NOT EXISTS "deposit_address_index_ltc" START WITH 1 MINVALUE 1;
--> statement-breakpoint
CREATE SEQUENCE IF NOT EXISTS "deposit_address_index_bch" START WITH 1 MINVALUE 1;
--> statement-breakpoint
-- server/adapters/chain/evm/schema.sql (the chain engines' tables)
create table if not exists evm_blocks (
  network text not null,
  height bigint not null,
  hash text not null,
  parent_hash text not null,
  primary key (network, height)
);
--> statement-breakpoint
create table if not exists evm_scanner_state (
  network text primary key,
  tip bigint,
  last_scan_at timestamptz,
  reorg_count bigint not null default 0
);
--> statement-breakpoint
create table if not exists evm_tokens (
  network text not null,
  address text not null,
  currency text not null,
  decimals integer not null,
  primary key (network, address)
);
--> statement-breakpoint
create table if not exists evm_deposits (
  network text not null,
  tx_hash text not null,
  output_index integer not null,
  from_address text not null,
  to_address text not null,
  currency text not null,
  amount text not null,
  amount_base numeric(78, 0) not null,
  block_number bigint,
  block_hash text,
  orphaned_at bigint,
  state text not null check (state in ('SEEN', 'CONFIRMED', 'DROPPED')),
  reorged_after_credit boolean not null default false,
  first_seen_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (network, tx_hash, output_index)
);
--> statement-breakpoint
create index if not exists evm_deposits_open on evm_deposits (network, state) where state = 'SEEN';
--> statement-breakpoint
create table if not exists evm_deposit_events (
  id bigserial primary key,
  network text not null,
  tx_hash text not null,
  output_index integer not null,
  state text not null check (state in ('SEEN', 'CONFIRMED', 'DROPPED')),
  confirmations integer not null,
  created_at timestamptz not null default now(),
  delivered_at timestamptz
);
--> statement-breakpoint
create unique index if not exists evm_deposit_events_confirmed_once
  on evm_deposit_events (network, tx_hash, output_index) where state = 'CONFIRMED';
--> statement-breakpoint
create index if not exists evm_deposit_events_undelivered on evm_deposit_events (network, id) where delivered_at is null;
--> statement-breakpoint
create table if not exists evm_nonces (
  network text not null,
  address text not null,
  next_nonce bigint not null,
  primary key (network, address)
);
--> statement-breakpoint
create table if not exists evm_transactions (
  id text primary key,
  network text not null,
  kind text not null check (kind in ('PAYOUT', 'SWEEP', 'GAS_TOPUP')),
  from_address text not null,
  key_path text not null,
  to_address text not null,
  currency text not null,
  amount text not null,
  amount_base numeric(78, 0) not null,
  status text not null check (status in ('HELD', 'SIGNED', 'SENT', 'MINED')),
  held_needed numeric(78, 0),
  held_available numeric(78, 0),
  held_currency text,
  nonce bigint,
  tx_hash text,
  raw_tx text,
  gas_limit numeric(78, 0),
  max_fee_per_gas numeric(78, 0),
  max_priority_fee_per_gas numeric(78, 0),
  block_number bigint,
  success boolean,
  fee_paid numeric(78, 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
--> statement-breakpoint
create index if not exists evm_transactions_open on evm_transactions (network, status) where status in ('SIGNED', 'SENT', 'HELD');
--> statement-breakpoint
create table if not exists evm_transaction_attempts (
  tx_hash text primary key,
  transaction_id text not null references evm_transactions (id),
  raw_tx text not null,
  max_fee_per_gas numeric(78, 0) not null,
  max_priority_fee_per_gas numeric(78, 0) not null,
  created_at timestamptz not null default now()
);
--> statement-breakpoint
create index if not exists evm_transaction_attempts_of on evm_transaction_attempts (transaction_id);
--> statement-breakpoint
-- server/adapters/chain/utxo/schema.sql (the chain engines' tables)
create table if not exists utxo_cursor (
  network text primary key,
  height integer not null,
  hash text not null,
  updated_at timestamptz not null default now()
);
--> statement-breakpoint
create table if not exists utxo_blocks (
  network text not null,
  height integer not null,
  hash text not null,
  primary key (network, height)
);
--> statement-breakpoint
create table if not exists utxo_addresses (
  network text not null,
  branch smallint not null check (branch in (0, 1)),
  idx integer not null check (idx >= 0),
  address text not null,
  script text not null,
  used boolean not null default false,
  primary key (network, branch, idx),
  unique (network, script)
);
--> statement-breakpoint
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
  fee bigint,
  block_hash text,
  block_height integer,
  state text not null default 'SEEN' check (state in ('SEEN', 'CONFIRMED', 'DROPPED')),
  reorged_after_credit boolean not null default false,
  spent_by text,
  reported_state text,
  reported_confirmations integer,
  first_seen_at timestamptz not null default now(),
  primary key (network, txid, vout)
);
--> statement-breakpoint
create index if not exists utxo_outputs_open on utxo_outputs (network) where state = 'SEEN';
--> statement-breakpoint
create index if not exists utxo_outputs_unspent on utxo_outputs (network) where spent_by is null and state <> 'DROPPED';
--> statement-breakpoint
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
