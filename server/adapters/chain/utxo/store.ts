/**
 * The engine's SQL (tables `utxo_*`, migration 0005). Only database I/O here: no node calls, so no
 * transaction ever waits on a node.
 */
import type postgres from 'postgres';
import type { ChainState } from './types.js';
import type { Branch } from './keys.js';
import type { StoredBlock } from './scanner.rules.js';

export type Sql = postgres.Sql;
/** The pool or a transaction. */
export type SqlLike = postgres.Sql | postgres.TransactionSql;


/** Create the engine's tables if they are missing (idempotent). */
export type WatchedAddress = { branch: Branch; idx: number; address: string; script: string };

export async function watchedAddresses(sql: SqlLike, network: string): Promise<WatchedAddress[]> {
  return sql<WatchedAddress[]>`select branch, idx, address, script from utxo_addresses where network = ${network}`;
}

export async function insertAddresses(sql: SqlLike, network: string, rows: WatchedAddress[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`insert into utxo_addresses ${sql(rows.map((r) => ({ network, ...r })), 'network', 'branch', 'idx', 'address', 'script')} on conflict do nothing`;
}

/** Per branch: how many addresses are derived (indices 0..derived-1, always contiguous) and the highest used index. */
export async function addressStats(sql: SqlLike, network: string): Promise<Map<Branch, { derived: number; highestUsed: number }>> {
  const rows = await sql<{ branch: Branch; derived: number; highest_used: number }[]>`
    select branch, (max(idx) + 1)::int as derived, coalesce(max(idx) filter (where used), -1)::int as highest_used
    from utxo_addresses where network = ${network} group by branch`;
  const stats = new Map<Branch, { derived: number; highestUsed: number }>([
    [0, { derived: 0, highestUsed: -1 }],
    [1, { derived: 0, highestUsed: -1 }],
  ]);
  for (const r of rows) stats.set(Number(r.branch) as Branch, { derived: r.derived, highestUsed: r.highest_used });
  return stats;
}

export async function readCursor(sql: SqlLike, network: string): Promise<StoredBlock | null> {
  const [row] = await sql<StoredBlock[]>`select height, hash from utxo_cursor where network = ${network}`;
  return row ?? null;
}

/** What `/metrics` reports of the scanner, from the database: any process sees the scanning worker's passes. */
export async function readScanState(sql: SqlLike, network: string): Promise<{ height: number; lastScanAt: Date | null; reorgs: number } | null> {
  // last_scan_at as epoch ms: the pool's type parsers may hand timestamps back as strings.
  const [row] = await sql<{ height: number; last_scan_ms: string | null; reorg_count: number }[]>`
    select height, (extract(epoch from last_scan_at) * 1000)::bigint as last_scan_ms, reorg_count from utxo_cursor where network = ${network}`;
  if (!row) return null;
  return { height: row.height, lastScanAt: row.last_scan_ms != null ? new Date(Number(row.last_scan_ms)) : null, reorgs: row.reorg_count };
}

/** A pass completed. */
export async function recordPass(sql: SqlLike, network: string): Promise<void> {
  await sql`update utxo_cursor set last_scan_at = now() where network = ${network}`;
}

/** Reorganisations a pass walked back. */
export async function addReorgs(sql: SqlLike, network: string, reorgs: number): Promise<void> {
  await sql`update utxo_cursor set reorg_count = reorg_count + ${reorgs} where network = ${network}`;
}

export async function storedBlocks(sql: SqlLike, network: string, below: number, limit: number): Promise<StoredBlock[]> {
  return sql<StoredBlock[]>`select height, hash from utxo_blocks where network = ${network} and height <= ${below} order by height desc limit ${limit}`;
}

/** Blocks kept for walk-back; a reorg deeper than this restarts from the node's hash at the fork. */
export const KEPT_BLOCKS = 1000;

export async function setCursor(sql: SqlLike, network: string, block: StoredBlock): Promise<void> {
  await sql`insert into utxo_blocks (network, height, hash) values (${network}, ${block.height}, ${block.hash})
            on conflict (network, height) do update set hash = excluded.hash`;
  await sql`delete from utxo_blocks where network = ${network} and height <= ${block.height - KEPT_BLOCKS}`;
  await sql`insert into utxo_cursor (network, height, hash) values (${network}, ${block.height}, ${block.hash})
            on conflict (network) do update set height = excluded.height, hash = excluded.hash, updated_at = now()`;
}

/**
 * Blocks above `height` left the best chain: forget them, and take their outputs back to
 * unconfirmed. A credited (CONFIRMED) output keeps its state and is flagged for operator review;
 * the scanner's settle pass drops it (and Kassa reverses its credit) if it does not come back.
 */
export async function disconnectAbove(sql: SqlLike, network: string, height: number): Promise<number> {
  const moved = await sql`
    update utxo_outputs set block_hash = null, block_height = null, gone_since_tip = null,
      reorged_after_credit = reorged_after_credit or state = 'CONFIRMED'
    where network = ${network} and block_height > ${height}`;
  await sql`delete from utxo_blocks where network = ${network} and height > ${height}`;
  return moved.count;
}

export type NewOutput = {
  txid: string;
  vout: number;
  branch: Branch;
  idx: number;
  address: string;
  script: string;
  amount: bigint;
  fromAddress: string;
  fee: bigint | null;
};

/** Outpoints already recorded among these transactions' (so the scanner reads sender and fee only for new ones). */
export async function knownOutputs(sql: SqlLike, network: string, txids: string[]): Promise<Set<string>> {
  if (txids.length === 0) return new Set();
  const rows = await sql<{ txid: string; vout: number }[]>`
    select txid, vout from utxo_outputs where network = ${network} and txid = any(${txids})`;
  return new Set(rows.map((r) => `${r.txid}:${r.vout}`));
}

/**
 * Record outputs paying watched addresses; `block` is where they are mined on the best chain
 * (null: mempool). The primary key makes a second sighting an update, never a second row.
 */
export async function upsertOutputs(sql: SqlLike, network: string, outputs: NewOutput[], block: StoredBlock | null): Promise<void> {
  for (const o of outputs) {
    await sql`
      insert into utxo_outputs (network, txid, vout, branch, idx, address, script, amount, from_address, fee, block_hash, block_height)
      values (${network}, ${o.txid}, ${o.vout}, ${o.branch}, ${o.idx}, ${o.address}, ${o.script}, ${o.amount.toString()},
              ${o.fromAddress}, ${o.fee === null ? null : o.fee.toString()}, ${block?.hash ?? null}, ${block?.height ?? null})
      on conflict (network, txid, vout) do update set
        block_hash = coalesce(excluded.block_hash, utxo_outputs.block_hash),
        block_height = coalesce(excluded.block_height, utxo_outputs.block_height),
        -- A DROPPED output seen again (mined or back in the mempool after all: its conflict was
        -- itself reorganised away, or an evicted transaction was sent again) is SEEN anew and
        -- reported so; a credit reversed when it was dropped is then granted again by Kassa.
        state = case when utxo_outputs.state = 'DROPPED' then 'SEEN' else utxo_outputs.state end,
        gone_since_tip = case when utxo_outputs.state = 'DROPPED' then null else utxo_outputs.gone_since_tip end,
        reorged_after_credit = utxo_outputs.reorged_after_credit and utxo_outputs.state <> 'DROPPED'`;
    await sql`update utxo_addresses set used = true where network = ${network} and branch = ${o.branch} and idx = ${o.idx} and not used`;
  }
}

/** Outputs spent by transactions seen on chain or in the mempool. */
export async function markSpent(sql: SqlLike, network: string, spends: { txid: string; vout: number; spender: string }[]): Promise<void> {
  if (spends.length === 0) return;
  await sql`
    update utxo_outputs o set spent_by = s.spender
    from unnest(${spends.map((s) => s.txid)}::text[], ${spends.map((s) => s.vout)}::int[], ${spends.map((s) => s.spender)}::text[]) as s(txid, vout, spender)
    where o.network = ${network} and o.txid = s.txid and o.vout = s.vout and o.spent_by is distinct from s.spender`;
}

export type OutputRow = NewOutput & {
  blockHash: string | null;
  blockHeight: number | null;
  state: ChainState;
  spentBy: string | null;
  reportedState: ChainState | null;
  reportedConfirmations: number | null;
  /** A credited output off the best chain and out of the mempool: the tip when first found so. */
  goneSinceTip: number | null;
};

type RawOutputRow = Omit<OutputRow, 'amount' | 'fee' | 'branch'> & { amount: string; fee: string | null; branch: number };

function toOutputRow(r: RawOutputRow): OutputRow {
  return { ...r, branch: Number(r.branch) as Branch, amount: BigInt(r.amount), fee: r.fee === null ? null : BigInt(r.fee) };
}

const OUTPUT_COLUMNS = (sql: SqlLike) => sql`
  txid, vout, branch, idx, address, script, amount, from_address as "fromAddress", fee, block_hash as "blockHash",
  block_height as "blockHeight", state, spent_by as "spentBy", reported_state as "reportedState",
  reported_confirmations as "reportedConfirmations", gone_since_tip as "goneSinceTip"`;

/** Outputs still moving: SEEN, credited but off the best chain, or not yet reported in their last state. */
export async function openOutputs(sql: SqlLike, network: string): Promise<OutputRow[]> {
  const rows = await sql<RawOutputRow[]>`
    select ${OUTPUT_COLUMNS(sql)} from utxo_outputs
    where network = ${network}
      and (state = 'SEEN' or (state = 'CONFIRMED' and block_height is null) or reported_state is distinct from state)
    order by first_seen_at, txid, vout`;
  return rows.map(toOutputRow);
}

export async function allOutputs(sql: SqlLike, network: string): Promise<OutputRow[]> {
  const rows = await sql<RawOutputRow[]>`select ${OUTPUT_COLUMNS(sql)} from utxo_outputs where network = ${network} order by txid, vout`;
  return rows.map(toOutputRow);
}

/** Move an output from `from` to `state` (a no-op when another pass moved it first). */
export async function setState(sql: SqlLike, network: string, txid: string, vout: number, from: ChainState, state: ChainState): Promise<void> {
  await sql`update utxo_outputs set state = ${state} where network = ${network} and txid = ${txid} and vout = ${vout} and state = ${from}`;
}

export async function setGoneSince(sql: SqlLike, network: string, txid: string, vout: number, tip: number | null): Promise<void> {
  await sql`update utxo_outputs set gone_since_tip = ${tip} where network = ${network} and txid = ${txid} and vout = ${vout}`;
}

export async function markReported(sql: SqlLike, network: string, txid: string, vout: number, state: ChainState, confirmations: number): Promise<void> {
  await sql`update utxo_outputs set reported_state = ${state}, reported_confirmations = ${confirmations}
            where network = ${network} and txid = ${txid} and vout = ${vout}`;
}

export type PayoutRow = {
  id: string;
  toAddress: string;
  amount: bigint;
  txid: string;
  rawTx: string;
  fee: bigint;
  changeIndex: number | null;
  broadcastAt: Date | null;
};

export async function findPayout(sql: SqlLike, network: string, id: string): Promise<PayoutRow | null> {
  const [row] = await sql<(Omit<PayoutRow, 'amount' | 'fee'> & { amount: string; fee: string })[]>`
    select id, to_address as "toAddress", amount, txid, raw_tx as "rawTx", fee, change_index as "changeIndex", broadcast_at as "broadcastAt"
    from utxo_payouts where network = ${network} and id = ${id}`;
  return row ? { ...row, amount: BigInt(row.amount), fee: BigInt(row.fee) } : null;
}

/** The next change index: /1/0 is the treasury, each payout's change gets a fresh /1/i (i ≥ 1). */
export async function nextChangeIndex(sql: SqlLike, network: string): Promise<number> {
  const [row] = await sql<{ next: number }[]>`
    select (coalesce(max(change_index), 0) + 1)::int as next from utxo_payouts where network = ${network}`;
  return row!.next;
}

/** Tracked outputs not spent and not dropped, with what the spendability rule needs. */
export async function unspentOutputs(sql: SqlLike, network: string): Promise<OutputRow[]> {
  const rows = await sql<RawOutputRow[]>`
    select ${OUTPUT_COLUMNS(sql)} from utxo_outputs
    where network = ${network} and spent_by is null and state <> 'DROPPED' order by txid, vout`;
  return rows.map(toOutputRow);
}

export async function insertPayout(
  sql: SqlLike,
  network: string,
  p: { id: string; toAddress: string; amount: bigint; txid: string; rawTx: string; fee: bigint; feeRate: string; changeIndex: number | null; inputs: { txid: string; vout: number }[] },
): Promise<void> {
  await sql`
    insert into utxo_payouts (network, id, to_address, amount, txid, raw_tx, fee, fee_rate, change_index, inputs)
    values (${network}, ${p.id}, ${p.toAddress}, ${p.amount.toString()}, ${p.txid}, ${p.rawTx}, ${p.fee.toString()}, ${p.feeRate},
            ${p.changeIndex}, ${JSON.stringify(p.inputs)}::jsonb)`;
  await insertAttempt(sql, network, p.id, p, true);
  await markSpent(sql, network, p.inputs.map((i) => ({ ...i, spender: p.txid })));
}

/** A signed version of a payout (the first, in force at once; or a replacement), stored before it is sent. */
export async function insertAttempt(
  sql: SqlLike,
  network: string,
  payoutId: string,
  a: { txid: string; rawTx: string; fee: bigint; feeRate: string },
  inForce = false,
): Promise<void> {
  await sql`
    insert into utxo_payout_attempts (network, txid, payout_id, raw_tx, fee, fee_rate, in_force_at)
    values (${network}, ${a.txid}, ${payoutId}, ${a.rawTx}, ${a.fee.toString()}, ${a.feeRate}, case when ${inForce}::boolean then now() end)
    on conflict (network, txid) do nothing`;
}

/** The payout's signed versions, oldest first. */
export async function payoutAttempts(sql: SqlLike, network: string, payoutId: string): Promise<{ txid: string; rawTx: string; fee: bigint; feeRate: string }[]> {
  const rows = await sql<{ txid: string; rawTx: string; fee: string; feeRate: string }[]>`
    select txid, raw_tx as "rawTx", fee, fee_rate::text as "feeRate" from utxo_payout_attempts
    where network = ${network} and payout_id = ${payoutId} order by created_at, txid`;
  return rows.map((r) => ({ ...r, fee: BigInt(r.fee) }));
}

/**
 * Make the stored version `txid` the payout's version in force, only from the version `from` it was
 * read at (a concurrent pass that moved it first wins). True when it moved.
 */
export async function movePayoutTo(sql: SqlLike, network: string, payoutId: string, from: string, txid: string): Promise<boolean> {
  const moved = await sql`
    with moved as (
      update utxo_payouts p set txid = a.txid, raw_tx = a.raw_tx, fee = a.fee, fee_rate = a.fee_rate, last_error = null
        from utxo_payout_attempts a
       where p.network = ${network} and p.id = ${payoutId} and p.txid = ${from}
         and a.network = p.network and a.payout_id = p.id and a.txid = ${txid}
      returning a.txid)
    update utxo_payout_attempts set in_force_at = coalesce(in_force_at, now())
     where network = ${network} and txid in (select txid from moved)`;
  return moved.count === 1;
}

/** How far back the signer's pass looks after payouts (and their replacements), in days. */
export const RECENT_PAYOUT_DAYS = 7;

export type OpenPayout = {
  id: string;
  txid: string;
  fee: bigint;
  feeRate: string;
  changeIndex: number | null;
  inputs: { txid: string; vout: number }[];
  signedAt: Date;
  /** Created within the pass's window (older ones are tended only until final). */
  recent: boolean;
};

/**
 * The payouts to tend: every one not yet found final, whatever its age, and those created within
 * `withinDays` (a final one too: a reorganisation deeper than the confirmations is looked after for a
 * while), with when their last version was signed (a replacement the node refused counts: the next is
 * tried one wait later, not on every pass).
 */
export async function payoutsToTend(sql: SqlLike, network: string, withinDays: number): Promise<OpenPayout[]> {
  const rows = await sql<(Omit<OpenPayout, 'fee'> & { fee: string })[]>`
    select p.id, p.txid, p.fee, p.fee_rate::text as "feeRate", p.change_index as "changeIndex", p.inputs,
           greatest(p.created_at, (select max(a.created_at) from utxo_payout_attempts a where a.network = p.network and a.payout_id = p.id)) as "signedAt",
           p.created_at > now() - make_interval(days => ${withinDays}) as recent
      from utxo_payouts p
     where p.network = ${network} and (p.final_at is null or p.created_at > now() - make_interval(days => ${withinDays}))
     order by p.created_at, p.id`;
  return rows.map((r) => ({ ...r, fee: BigInt(r.fee), signedAt: new Date(r.signedAt) }));
}

/** A version of the payout is deep enough on the best chain: it leaves the pass once out of the recent window. */
export async function markPayoutFinal(sql: SqlLike, network: string, id: string): Promise<void> {
  await sql`update utxo_payouts set final_at = coalesce(final_at, now()) where network = ${network} and id = ${id}`;
}

/** The tracked outputs a payout spends, in its input order (what signing it again needs). */
export async function outputsAt(sql: SqlLike, network: string, refs: { txid: string; vout: number }[]): Promise<OutputRow[]> {
  const rows = await sql<RawOutputRow[]>`
    select ${OUTPUT_COLUMNS(sql)} from utxo_outputs
    where network = ${network} and (txid, vout) in (select * from unnest(${refs.map((r) => r.txid)}::text[], ${refs.map((r) => r.vout)}::int[]))`;
  const byKey = new Map(rows.map((r) => [`${r.txid}:${r.vout}`, toOutputRow(r)]));
  return refs.map((r) => {
    const row = byKey.get(`${r.txid}:${r.vout}`);
    if (!row) throw new Error(`${network}: the payout input ${r.txid}:${r.vout} is not a tracked output`);
    return row;
  });
}

/** Whether the change of payout transaction `txid` (at `<xpub>/1/changeIndex`) is spent, e.g. by a later payout. */
export async function changeSpent(sql: SqlLike, network: string, txid: string, changeIndex: number): Promise<boolean> {
  const [row] = await sql<{ spent: boolean }[]>`
    select exists (select 1 from utxo_outputs where network = ${network} and txid = ${txid} and branch = 1 and idx = ${changeIndex}
                    and spent_by is not null) as spent`;
  return row!.spent;
}

/**
 * Payouts replaced (more than one version has been in force; one whose replacements were all
 * refused was not), with the version in force now: what the app's records of them should show.
 */
export async function replacedPayouts(sql: SqlLike, network: string, withinDays: number): Promise<{ id: string; txHash: string }[]> {
  return sql<{ id: string; txHash: string }[]>`
    select p.id, p.txid as "txHash" from utxo_payouts p
     where p.network = ${network} and p.created_at > now() - make_interval(days => ${withinDays})
       and (select count(*) from utxo_payout_attempts a
             where a.network = p.network and a.payout_id = p.id and a.in_force_at is not null) > 1`;
}

export async function recordBroadcast(sql: SqlLike, network: string, id: string, error: string | null): Promise<void> {
  if (error === null) await sql`update utxo_payouts set broadcast_at = coalesce(broadcast_at, now()), last_error = null where network = ${network} and id = ${id}`;
  else await sql`update utxo_payouts set last_error = ${error} where network = ${network} and id = ${id}`;
}

/**
 * How many credited outputs a reorganisation took off the best chain, not back in a block and not yet
 * DROPPED (then Kassa reverses the credit). A partial index serves it.
 */
export async function countCreditedOffChain(sql: SqlLike, network: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    select count(*)::int as n from utxo_outputs
    where network = ${network} and reorged_after_credit and block_height is null and state <> 'DROPPED'`;
  return row?.n ?? 0;
}

/** Credited deposits whose block later left the best chain: for operator review (never edited back). */
export async function creditedThenReorged(sql: SqlLike, network: string): Promise<{ txid: string; vout: number; amount: bigint }[]> {
  const rows = await sql<{ txid: string; vout: number; amount: string }[]>`
    select txid, vout, amount from utxo_outputs where network = ${network} and reorged_after_credit order by txid, vout`;
  return rows.map((r) => ({ ...r, amount: BigInt(r.amount) }));
}
