-- Sanctions screening (CONTRACT §11). Idempotent: safe to run at every start.

-- The digital-currency addresses of an imported list, one row per (network, address, party, SDN code).
create table if not exists sanctioned_addresses (
  list            text not null,  -- 'ofac'
  network         text not null,  -- Kassa network: BTC, ETH, BSC, LTC, BCH, TRX, XRP, XLM, SOL
  address         text not null,  -- canonical form (networks.rules.ts#canonicalAddress)
  listed_address  text not null,  -- as published
  sdn_currency    text not null,  -- the code of 'Digital Currency Address - <code>'
  party_name      text not null,
  party_ref       text not null,  -- DistinctParty FixedRef
  primary key (list, network, address, party_ref, sdn_currency)
);
create index if not exists sanctioned_addresses_by_address on sanctioned_addresses (address, network);

-- One row per imported list: its presence is what "a list has been imported" means.
create table if not exists sanctions_lists (
  list          text primary key,
  imported_at   timestamptz not null,
  source        text not null,          -- file path or URL
  published     text,                   -- the file's DateOfIssue, YYYY-MM-DD
  address_count integer not null,
  counts        jsonb not null,         -- per Kassa network
  skipped       jsonb not null          -- per SDN code not mapped to a Kassa network
);
