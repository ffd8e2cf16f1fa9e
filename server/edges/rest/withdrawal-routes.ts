/** REST routes of withdrawals, balances and whitelisted addresses (CONTRACT §4, §6), as route-table entries. */
import { z } from 'zod';
import type { Deps } from '../../deps.js';
import {
  BalancesResponseSchema, CreateWhitelistSchema, CreateWithdrawalSchema, ForceOutcomeSchema, ListWithdrawalsQuerySchema,
  WhitelistDeletedSchema, WhitelistListSchema, WhitelistRecordSchema, WithdrawalListSchema, WithdrawalRecordSchema,
  addWhitelisted, createWithdrawal, getBusinessBalances, getWithdrawal, listWhitelisted, listWithdrawals, removeWhitelisted,
} from '../../modules/withdrawals/index.js';
// The sandbox's forced outcome broadcasts like the job does: the one edge allowed a *.job.ts (.dependency-cruiser.cjs).
import { forceOutcome } from '../../modules/withdrawals/withdrawal-broadcast.job.js';
import { SHARED_ERRORS, defineRoute, type AnyRoute, type ErrorCase } from './route.js';
import { exampleBalances, exampleWithdrawal, exampleWithdrawalRequest } from './examples.js';

const WithdrawalIdParamsSchema = z.strictObject({ withdrawalId: z.string().describe('The withdrawalId (UUID)') });
const WhitelistIdParamsSchema = z.strictObject({ id: z.string().describe('The id (UUID) of the whitelisted address') });

const DESTINATION_ERRORS: readonly ErrorCase[] = [
  { status: 422, code: 'CURRENCY_NOT_SUPPORTED', when: 'the currency is not a payout currency' },
  { status: 422, code: 'NETWORK_NOT_SUPPORTED', when: 'the currency is not withdrawn on this network (MAIN is no longer valid)' },
  SHARED_ERRORS.networkNotEnabled,
  SHARED_ERRORS.networkUnavailable,
  { status: 422, code: 'INVALID_ADDRESS', when: 'the address is not valid for the network' },
  { status: 422, code: 'INVALID_DESTINATION_TAG', when: 'the destination tag or memo is not valid for the network' },
];

const WITHDRAWAL_ERRORS: readonly ErrorCase[] = [
  SHARED_ERRORS.forbiddenBusiness,
  SHARED_ERRORS.idempotency('clientWithdrawalId'),
  ...DESTINATION_ERRORS,
  { status: 422, code: 'AMOUNT_BELOW_MINIMUM', when: 'below minWithdrawalAmount of the pair (GET /v1/currencies)' },
  { status: 422, code: 'AMOUNT_ABOVE_MAXIMUM', when: 'above maxAmount of the pair (GET /v1/currencies)' },
  { status: 422, code: 'INSUFFICIENT_BALANCE', when: 'available in the settlement currency does not cover it (GET /v1/balances)' },
  { status: 422, code: 'ADDRESS_NOT_WHITELISTED', when: 'the business requires whitelisted addresses and this one is not' },
  { status: 422, code: 'ADDRESS_SANCTIONED', when: 'the destination is on a sanctions list' },
  SHARED_ERRORS.ratesUnavailable,
  { status: 503, code: 'SCREENING_UNAVAILABLE', when: 'a screening source cannot answer (Retry-After); nothing was created' },
];

const NOT_FOUND = SHARED_ERRORS.notFound;
const SINGLE_USE = { status: 409, code: 'REQUEST_ALREADY_USED', when: 'this exact signed request was already carried out (sign again with a later timestamp)' };

export function withdrawalRoutes(deps: Deps): AnyRoute[] {
  const routes: AnyRoute[] = [
    defineRoute({
      method: 'POST',
      path: '/v1/withdrawals',
      operationId: 'request-withdrawal',
      tag: 'Withdrawals',
      summary: 'Request a withdrawal',
      description:
        'Give exactly one of `amount` (in `withdrawCurrency`) or `displayAmount` (in `displayCurrency`). The settlement ' +
        'balance is debited immediately, moving from `available` to `pending` in GET /v1/balances, and is credited back if the withdrawal ' +
        'ends FAILED, BLOCKED or REJECTED. The outcome is POSTed to the withdrawal callback URL (see Webhooks).',
      auth: 'CREATE_WITHDRAWAL',
      body: CreateWithdrawalSchema,
      response: WithdrawalRecordSchema,
      errors: WITHDRAWAL_ERRORS,
      example: { request: exampleWithdrawalRequest, response: exampleWithdrawal },
      handler: async ({ body, caller }) => createWithdrawal(deps, caller, body),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/withdrawals/:withdrawalId',
      operationId: 'get-withdrawal',
      tag: 'Withdrawals',
      summary: 'Get a withdrawal',
      auth: 'READ_WITHDRAWAL',
      params: WithdrawalIdParamsSchema,
      response: WithdrawalRecordSchema,
      errors: [NOT_FOUND],
      example: { response: exampleWithdrawal },
      handler: async ({ params, caller }) => getWithdrawal(deps, caller.businessId, params.withdrawalId),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/withdrawals',
      operationId: 'list-withdrawals',
      tag: 'Withdrawals',
      summary: 'Business withdrawals, newest first',
      auth: 'READ_WITHDRAWAL',
      query: ListWithdrawalsQuerySchema,
      response: WithdrawalListSchema,
      handler: async ({ query, caller }) => listWithdrawals(deps, caller.businessId, query),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/balances',
      operationId: 'get-balances',
      tag: 'Withdrawals',
      summary: 'Balances per settlement currency',
      description:
        '`available`: the ledger balance (credited deposits minus accepted withdrawals), what a new withdrawal may use. ' +
        '`pending`: withdrawals accepted and not yet final (PENDING_APPROVAL, PROCESSING); already out of `available`, ' +
        'returned to it when one ends FAILED, BLOCKED or REJECTED. Deposits not yet credited (unconfirmed, in review) are in neither. ' +
        'Decimal strings, exactly the ledger’s amounts. The business’s settlement currency is always listed.',
      auth: 'READ_WITHDRAWAL',
      response: BalancesResponseSchema,
      example: { response: exampleBalances },
      handler: async ({ caller }) => getBusinessBalances(deps.database.db, caller.business),
    }),
    defineRoute({
      method: 'POST',
      path: '/v1/whitelisted-addresses',
      operationId: 'create-whitelisted-address',
      tag: 'Whitelisted addresses',
      summary: 'Whitelist a withdrawal address',
      description:
        '`network` is mandatory (2023-02-09); currency and network pairs are those of withdrawals. Single-use: a signed request is accepted once (a replay, even inside the clock window, is 409 REQUEST_ALREADY_USED), so a captured one cannot put back an address removed since.',
      auth: 'MANAGE_WHITELIST',
      singleUse: true,
      body: CreateWhitelistSchema,
      response: WhitelistRecordSchema,
      errors: [...DESTINATION_ERRORS, { status: 422, code: 'ALREADY_WHITELISTED', when: 'this address is already whitelisted for the pair' }, SINGLE_USE],
      handler: async ({ body, caller }) => addWhitelisted(deps, caller.businessId, body),
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/whitelisted-addresses',
      operationId: 'list-whitelisted-addresses',
      tag: 'Whitelisted addresses',
      summary: 'List whitelisted addresses',
      auth: 'MANAGE_WHITELIST',
      response: WhitelistListSchema,
      handler: async ({ caller }) => listWhitelisted(deps, caller.businessId),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/whitelisted-addresses/:id',
      operationId: 'delete-whitelisted-address',
      tag: 'Whitelisted addresses',
      summary: 'Remove a whitelisted address',
      description: 'Single-use: a signed request is accepted once (a replay is 409 REQUEST_ALREADY_USED).',
      auth: 'MANAGE_WHITELIST',
      singleUse: true,
      params: WhitelistIdParamsSchema,
      response: WhitelistDeletedSchema,
      errors: [NOT_FOUND, SINGLE_USE],
      handler: async ({ params, caller }) => removeWhitelisted(deps, caller.businessId, params.id),
    }),
  ];
  if (deps.config.sandbox) {
    routes.push(
      defineRoute({
        method: 'POST',
        path: '/v1/test-helpers/withdrawals/:withdrawalId/outcome',
        operationId: 'sandbox-force-withdrawal-outcome',
        tag: 'Sandbox test helpers',
        summary: 'Sandbox: force a withdrawal outcome',
        description: 'Only in sandbox (404 elsewhere). Broadcasts now and records the given outcome, with its callback.',
        auth: 'CREATE_WITHDRAWAL',
        params: WithdrawalIdParamsSchema,
        body: ForceOutcomeSchema,
        response: WithdrawalRecordSchema,
        errors: [
          NOT_FOUND,
          { status: 422, code: 'WITHDRAWAL_FINAL', when: 'the withdrawal already has an outcome' },
          { status: 422, code: 'WITHDRAWAL_AWAITING_APPROVAL', when: 'COMPLETED asked for a withdrawal its approvers have not approved yet' },
        ],
        handler: async ({ params, body, caller }) => forceOutcome(deps, deps.chains, caller.businessId, params.withdrawalId, body.status),
      }),
    );
  }
  return routes;
}
