-- The EVM engine's tables (ETH, BSC). Idempotent: safe to apply on every start
-- until the lead folds it into a migration. Amounts: `amount` is the exact
-- decimal string in whole units, `amount_base` the integer in base units.

-- Scanned blocks of the best chain as the scanner last saw it: the highest row
-- is the cursor (height, hash); the rows below it are what a reorg walk-back
-- compares against (pruned to the last few hundred).
create table if not exists evm_blocks (
  network text not null,
  height bigint not null,
  hash text not null,
  parent_hash text not null,
  primary key (network, height)
);

create table if not exists evm_scanner_state (
  network text primary key,
  tip bigint,
  last_scan_at timestamptz,
  reorg_count bigint not null default 0
);

-- Token decimals, read once per contract with `decimals()`.
create table if not exists evm_tokens (
  network text not null,
  address text not null,
  currency text not null,
  decimals integer not null,
  primary key (network, address)
);

-- One row per transfer to a watched address. output_index: the log index for
-- a token, 0 for native. block_number null + orphaned_at set = its block left
-- the best chain and it has not (yet) reappeared.
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
create index if not exists evm_deposits_open on evm_deposits (network, state) where state = 'SEEN';

-- The outbox of reports: written in the transaction that changes a deposit,
-- delivered to the sink in id order and marked. CONFIRMED at most once per
-- transfer, whatever happens (the unique index, not only the code, says so).
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
create unique index if not exists evm_deposit_events_confirmed_once
  on evm_deposit_events (network, tx_hash, output_index) where state = 'CONFIRMED';
create index if not exists evm_deposit_events_undelivered on evm_deposit_events (network, id) where delivered_at is null;

-- The signer's nonce per sending address: allocated in the transaction that
-- stores the signed transaction, so a nonce is never handed out twice.
create table if not exists evm_nonces (
  network text not null,
  address text not null,
  next_nonce bigint not null,
  primary key (network, address)
);

-- Outgoing transactions (payouts, sweeps, gas top-ups) by idempotency key.
-- raw_tx is stored before broadcast; a retry rebroadcasts it, never re-signs.
create table if not exists evm_transactions (
  id text primary key,
  network text not null,
  kind text not null check (kind in ('PAYOUT', 'SWEEP', 'GAS_TOPUP')),
  from_address text not null,
  -- The sender's key under the account: '1/0' the treasury, '0/<i>' deposit address i.
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
  -- gas used × effective gas price, from the receipt (paid even when the call reverted)
  fee_paid numeric(78, 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index if not exists evm_transactions_open on evm_transactions (network, status) where status in ('SIGNED', 'SENT', 'HELD');

-- Every signed version of a transaction (the first and its fee-bump
-- replacements, same nonce): any of them may be the one that is mined.
create table if not exists evm_transaction_attempts (
  tx_hash text primary key,
  transaction_id text not null references evm_transactions (id),
  raw_tx text not null,
  max_fee_per_gas numeric(78, 0) not null,
  max_priority_fee_per_gas numeric(78, 0) not null,
  created_at timestamptz not null default now()
);
create index if not exists evm_transaction_attempts_of on evm_transaction_attempts (transaction_id);
