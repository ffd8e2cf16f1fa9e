-- What the sender of an EVM deposit paid the network, in the deposit's currency: gas used × effective
-- gas price for a native transfer (from its receipt), 0 for a token transfer (its gas is paid in the
-- chain's coin, none in the token). Null for deposits recorded before this column.
alter table evm_deposits add column if not exists on_chain_fee numeric;
