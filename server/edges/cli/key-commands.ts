/** API keys, operators and the callback secret (CONTRACT §9). */
import { SCOPES, type Scope } from '../../modules/money/index.js';
import {
  createApiKey, createOperator, listApiKeys, listOperators, revokeApiKey, revokeOperator, rotateCallbackSecret,
} from '../../modules/businesses/index.js';
import { command, requireBusiness, requireChoice, requireString, requireUuid, table, UsageError } from './command.js';

/** The longest overlap a rotation may keep the old secret signing: 30 days. */
const MAX_OVERLAP_HOURS = 720;

export const keyCommands = [
  command(`apikey:create --business <id> --scopes ${SCOPES.join(',')}`, 'a new API key with those scopes (the secret is shown once)', async (ctx, values) => {
    const businessId = await requireBusiness(ctx, values);
    const scopes = String(values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (scopes.length === 0 || unknown.length) {
      throw new UsageError(`--scopes must list some of ${SCOPES.join(', ')}${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}.`);
    }
    const key = await createApiKey(ctx.db, ctx.masterKey, businessId, [...new Set(scopes)] as Scope[]);
    const out = { businessId, apiKeyId: key.apiKeyId, apiKey: key.apiKey, apiSecret: key.apiSecret, scopes: key.scopes };
    return { json: out, human: `apiKey    ${key.apiKey}\napiSecret ${key.apiSecret}\nscopes    ${key.scopes.join(',')}` };
  }),
  command('apikey:list --business <id>', "a business's keys with scopes and revocation time, never their secrets", async (ctx, values) => {
    const businessId = await requireBusiness(ctx, values);
    const keys = await listApiKeys(ctx.db, businessId);
    return {
      json: { businessId, apiKeys: keys },
      human: keys.length
        ? table([
            ['apiKey', 'scopes', 'created', 'revoked'],
            ...keys.map((k) => [k.apiKey, k.scopes.join(','), k.createdAt.toISOString(), k.revokedAt?.toISOString() ?? '-']),
          ])
        : 'no API keys',
    };
  }),
  command('apikey:revoke --key <apiKey>', 'revoke a key at once: its next request is refused', async (ctx, values) => {
    const apiKey = requireString(values, 'key', 'apiKey');
    const row = await revokeApiKey(ctx.db, apiKey, ctx.now());
    return { json: row, human: `API key ${row.apiKey} revoked at ${row.revokedAt!.toISOString()}` };
  }),
  command('callback-secret:rotate --business <id> [--overlap-hours 24] [--replace-previous]', 'a new callback secret; until the overlap ends every callback (retries too) is signed with the new and the old (refused while an earlier overlap runs, unless --replace-previous ends it)', async (ctx, values) => {
    const businessId = requireUuid(values, 'business');
    const hoursText = (values['overlap-hours'] as string | undefined) ?? '24';
    const hours = Number(hoursText);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(hoursText) || hours > MAX_OVERLAP_HOURS) {
      throw new UsageError(`--overlap-hours must be a number of hours from 0 to ${MAX_OVERLAP_HOURS}.`);
    }
    const until = new Date(ctx.now().getTime() + Math.round(hours * 3_600_000));
    const rotated = await rotateCallbackSecret(ctx.db, ctx.masterKey, businessId, until, { now: ctx.now(), replacePrevious: values['replace-previous'] === true });
    const out = { businessId, callbackSecret: rotated.callbackSecret, previousSecretValidUntil: rotated.previousSecretValidUntil };
    return {
      json: out,
      human: `callbackSecret ${out.callbackSecret}\nthe previous secret also signs until ${out.previousSecretValidUntil.toISOString()}`,
    };
  }),
  command('operator:create --name <n> --role admin|viewer', "an operator of the internal API; prints the bearer token (shown once)", async (ctx, values) => {
    const name = requireString(values, 'name', 'n');
    const role = requireChoice(values, 'role', ['admin', 'viewer'] as const);
    const op = await createOperator(ctx.db, name, role);
    return { json: { operatorId: op.operatorId, name, role, token: op.token }, human: `Bearer token (shown once): ${op.token}` };
  }),
  command('operator:list', 'every operator with role and creation/revocation time, never a token', async (ctx) => {
    const ops = await listOperators(ctx.db);
    return {
      json: { operators: ops },
      human: ops.length
        ? table([['name', 'role', 'created', 'revoked'], ...ops.map((o) => [o.name, o.role, o.createdAt.toISOString(), o.revokedAt?.toISOString() ?? '-'])])
        : 'no operators',
    };
  }),
  command('operator:revoke --name <n>', "revoke an operator's bearer token at once (a leaked one, someone who left); its past decisions stay", async (ctx, values) => {
    const row = await revokeOperator(ctx.db, requireString(values, 'name', 'n'), ctx.now());
    return { json: row, human: `operator ${row.name} revoked at ${row.revokedAt!.toISOString()}: its token is refused from its next request on` };
  }),
];
