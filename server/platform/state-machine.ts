/**
 * One state machine for every entity with a status (payments, deposits,
 * refunds, withdrawals): the table of allowed moves as data, and one
 * `transition` that refuses an illegal move, compare-and-sets the row,
 * appends the event row and hands the change to subscribers — all in the
 * caller's transaction, so the change, its history and whatever subscribers
 * write (a NOTIFY, a callback delivery and its job) commit together.
 *
 * Storage is given by each entity (`EntityStore`): this file knows no table.
 */
import { KassaError } from './errors.js';

export type StateMachine<S extends string> = {
  /** What the entity is called in errors ("Payment", "Deposit", …). */
  readonly name: string;
  readonly states: readonly S[];
  /** The table: for each status, the statuses it may move to. */
  readonly transitions: Readonly<Record<S, readonly S[]>>;
  /** The statuses an entity may be created in. */
  readonly initial: readonly S[];
  /** Whether `from` may move to `to`; `null` is "not created yet". */
  can(from: S | null, to: S): boolean;
  /** Statuses with no way out. */
  readonly terminal: readonly S[];
};

export function defineStateMachine<const S extends string>(def: {
  name: string;
  states: readonly S[];
  initial: readonly S[];
  transitions: Record<S, readonly S[]>;
}): StateMachine<S> {
  const { name, states, initial, transitions } = def;
  return {
    name,
    states,
    transitions,
    initial,
    can: (from, to) => (from === null ? initial : transitions[from]).includes(to),
    terminal: states.filter((s) => transitions[s].length === 0),
  };
}

export type TransitionEvent<S extends string> = { id: string; from: S | null; to: S; reason: string; at: Date; data: Record<string, unknown> };

/** Told of an event inside the transaction `tx` of the change; throwing rolls the change back. */
export type Subscriber<Tx, E> = (tx: Tx, event: E) => Promise<void>;

/** How one entity's rows and event rows are written, inside transaction `Tx`. */
export type EntityStore<Tx, S extends string, Set = Record<string, unknown>> = {
  machine: StateMachine<S>;
  /** Compare-and-set: move row `id` from `from` to `to` (with `set`); how many rows changed (0: someone moved it first). */
  update(tx: Tx, id: string, from: S, to: S, set: Set | undefined, at: Date): Promise<number>;
  /** Append one event row. */
  record(tx: Tx, event: TransitionEvent<S>): Promise<void>;
};

export const illegalTransition = (name: string, id: string, from: string | null, to: string) =>
  new KassaError(409, 'ILLEGAL_TRANSITION', `${name} ${id} cannot move from ${from ?? '(new)'} to ${to}.`);

/** The entity was created (its row inserted by the caller): check the initial status, append the event. */
export async function recordCreated<Tx, S extends string>(
  tx: Tx,
  store: EntityStore<Tx, S, never>,
  id: string,
  status: S,
  reason: string,
  at: Date,
  data: Record<string, unknown> = {},
): Promise<void> {
  if (!store.machine.can(null, status)) throw illegalTransition(store.machine.name, id, null, status);
  await store.record(tx, { id, from: null, to: status, reason, at, data });
}

/** The row's compare-and-set; someone else moved it first: the caller's view is stale, so refuse rather than overwrite. */
async function updateOrRefuse<Tx, S extends string, Set>(tx: Tx, store: EntityStore<Tx, S, Set>, id: string, from: S, to: S, set: Set | undefined, at: Date) {
  if ((await store.update(tx, id, from, to, set, at)) === 0) {
    throw new KassaError(409, 'CONCURRENT_UPDATE', `${store.machine.name} ${id} changed concurrently.`);
  }
}

/**
 * A change to an entity's columns that leaves its status as it is (a payout's transaction hash
 * after a fee bump, a refund frozen in place): compare-and-set on the status it still has, and an
 * event row from that status to itself, so the change is in the entity's history like a move.
 */
export async function amend<Tx, S extends string, Set>(
  tx: Tx,
  store: EntityStore<Tx, S, Set>,
  entity: { id: string; status: string },
  reason: string,
  at: Date,
  options: { set: Set; data?: Record<string, unknown> },
): Promise<void> {
  const status = entity.status as S;
  await updateOrRefuse(tx, store, entity.id, status, status, options.set, at);
  await store.record(tx, { id: entity.id, from: status, to: status, reason, at, data: options.data ?? {} });
}

/**
 * The one way a status changes. `entity.status` is updated in place, so the
 * caller's row stays current; `subscribers` run after the event row, in order.
 */
export async function transition<Tx, S extends string, Set>(
  tx: Tx,
  store: EntityStore<Tx, S, Set>,
  entity: { id: string; status: string },
  to: S,
  reason: string,
  at: Date,
  options: { data?: Record<string, unknown>; set?: Set; subscribers?: readonly Subscriber<Tx, TransitionEvent<S> & { from: S }>[] } = {},
): Promise<void> {
  const from = entity.status as S;
  const { name } = store.machine;
  if (!store.machine.can(from, to)) throw illegalTransition(name, entity.id, from, to);
  await updateOrRefuse(tx, store, entity.id, from, to, options.set, at);
  const event = { id: entity.id, from, to, reason, at, data: options.data ?? {} };
  await store.record(tx, event);
  entity.status = to;
  for (const subscriber of options.subscribers ?? []) await subscriber(tx, event);
}
