-- Every create wrote this index and nothing read it: the deposit matcher looks payments up by
-- (network, wallet_address, destination_tag), which payments_address_tag (unique) already serves.
DROP INDEX "payments_wallet";