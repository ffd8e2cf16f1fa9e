/**
 * The prose of the API reference (Markdown, rendered by /docs from the
 * OpenAPI document's `info.description` and the webhooks' descriptions).
 * Written for a merchant: it names only what they have (their API key and
 * secret, their callback secret, their own server), never Kassa's files.
 */
import { AUTH_LOCKOUT } from '../../platform/rate-limit.js';
import { MAX_CLOCK_SKEW_S } from './signature.rules.js';

export const API_GUIDE = `
Crypto payment requests, deposits, refunds, balances and withdrawals.

## Authentication

Every request under \`/v1\` and \`/api/v1\` carries

\`\`\`
Authorization: KASSA-API api-key=<API key>,signature=<SIGNATURE>,timestamp=<UNIX seconds>
\`\`\`

\`SIGNATURE\` is the **lowercase hex HMAC-SHA256**, keyed with your **API secret**, of the UTF-8 string

\`\`\`
<timestamp>\\n<METHOD>\\n<path with query string>\\n<raw request body>
\`\`\`

joined by newlines (\`\\n\`); a request without a body signs the empty string after the last newline. The
timestamp is **UNIX time in seconds** (10 digits today, not milliseconds) and must be within
${MAX_CLOCK_SKEW_S} s of the server clock. Sign the exact bytes you send: serialise the body once and send that string.

A runnable example (Node 18 or later, no dependencies; save as \`kassa-request.mjs\`, then
\`KASSA_URL=… KASSA_API_KEY=… KASSA_API_SECRET=… KASSA_BUSINESS_ID=… node kassa-request.mjs\`):

\`\`\`js
import { createHmac } from 'node:crypto';

const { KASSA_URL, KASSA_API_KEY, KASSA_API_SECRET, KASSA_BUSINESS_ID } = process.env;

async function kassa(method, pathWithQuery, body) {
  const raw = body === undefined ? '' : JSON.stringify(body);
  const timestamp = Math.floor(Date.now() / 1000); // seconds, not milliseconds
  const signature = createHmac('sha256', KASSA_API_SECRET)
    .update(\`\${timestamp}\\n\${method}\\n\${pathWithQuery}\\n\${raw}\`)
    .digest('hex');
  const response = await fetch(KASSA_URL + pathWithQuery, {
    method,
    headers: {
      authorization: \`KASSA-API api-key=\${KASSA_API_KEY},signature=\${signature},timestamp=\${timestamp}\`,
      ...(raw ? { 'content-type': 'application/json' } : {}),
    },
    body: raw || undefined,
  });
  return { status: response.status, body: await response.json() };
}

console.log(await kassa('POST', '/v1/payments', {
  clientPaymentId: \`order-\${Date.now()}\`,
  businessId: KASSA_BUSINESS_ID,
  locale: 'en',
  displayCurrency: 'EUR',
  displayAmount: '49.90',
}));
console.log(await kassa('GET', '/v1/balances'));
\`\`\`

### When authentication fails

| answer | why | what the \`detail\` says |
|---|---|---|
| 401 \`UNAUTHORIZED\` | header missing or not in the form above | which part is missing or malformed |
| 401 \`UNAUTHORIZED\` | timestamp in milliseconds | that it looks like milliseconds, and the value in seconds |
| 401 \`UNAUTHORIZED\` | timestamp more than ${MAX_CLOCK_SKEW_S} s away | how far away it is and the server's time |
| 401 \`UNAUTHORIZED\` | unknown or revoked key, or wrong signature (one answer for all three) | the string the server verified, with the body replaced by its length, to compare with yours; never the secret or the expected signature |
| 403 \`FORBIDDEN_SCOPE\` | the key lacks the operation's scope | the scope needed |
| 429 \`RATE_LIMITED\` | lockout, see below | which limit, and \`Retry-After\` |

**Lockout.** Failed authentications (401) are counted per API key and per client address over ${AUTH_LOCKOUT.windowS} s.
After **${AUTH_LOCKOUT.perAddress} failures from one address** (with any keys), every request from it — correctly signed ones
too — is answered **429 \`RATE_LIMITED\`** with a \`Retry-After\` header (seconds) for ${AUTH_LOCKOUT.lockS} s. After
**${AUTH_LOCKOUT.perKey} failures for one key** (from any addresses), its wrongly signed requests are; a correctly signed one still
passes. Successful requests are not counted. Each web process counts on its own.

## Errors

Every error is \`application/problem+json\` (RFC 9457): \`{type, title, status, detail, code, errors: [{field, message}]}\`.
\`code\` is stable; branch on it, not on \`detail\`. A body field or query parameter the operation does not know is
**400 \`VALIDATION_FAILED\`** with one \`errors[]\` entry per unknown field (\`field\` = its name): a typo such as
\`displayAmmount\` is never silently ignored. 413: body over 64 KiB; 415: not \`application/json\`; 422: a valid request
refused by a business rule (its own \`code\`); 429: rate limit, with \`Retry-After\`.

## Amounts, times and minimums

- Amounts are **decimal strings** (\`"49.90"\`, \`"0.0012"\`), never numbers: fiat with its ISO 4217 minor units, crypto
  with at most the currency's decimals.
- Times named \`…At\` are **integers, UNIX seconds** (\`createdAt\`, \`paymentInitiatedAt\`, \`depositReceivedAt\`,
  \`changedAt\` of a callback). The internal tRPC API uses the same format.
- **Minimums.** \`GET /v1/currencies\` gives per deposit pair \`minAmount\`: a payment created in crypto below it, or a
  fiat payment whose amount due in the chosen currency is below it, is **422 \`AMOUNT_BELOW_MINIMUM\`** (a refund of less
  would be eaten by the network fee). Withdrawals have \`minWithdrawalAmount\` and \`maxAmount\` per pair.
- **Balances.** \`GET /v1/balances\`: per settlement currency \`available\` (the ledger balance a withdrawal can use) and
  \`pending\` (withdrawals accepted and not yet final, already out of \`available\`).

## Callbacks

Kassa POSTs JSON to your \`paymentCallbackUrl\` on every payment status change and to your \`withdrawalCallbackUrl\`
when a withdrawal ends (see **Webhooks** below for both bodies). They follow
[Standard Webhooks](https://www.standardwebhooks.com): headers \`webhook-id\` (the same on every retry of one
callback: use it to ignore duplicates), \`webhook-timestamp\` (UNIX seconds) and \`webhook-signature\`
(\`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">\`; during a secret rotation it holds two signatures,
space-separated). Your **callback secret** is \`whsec_\` followed by base64: the HMAC key is the base64-decoded part
after \`whsec_\` (the \`standardwebhooks\` package does this for you). Answer any 2xx within the timeout; anything else is
retried on a fixed schedule until the retry window ends.

Verify with the \`standardwebhooks\` package (\`npm install standardwebhooks\`) **over the raw body, byte for byte**
— never over JSON you parsed and serialised again:

**Express**

\`\`\`js
import express from 'express';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.KASSA_CALLBACK_SECRET); // "whsec_…"
const app = express();

// express.raw keeps the body as a Buffer: do not put express.json() in front of this route.
app.post('/kassa/callbacks', express.raw({ type: 'application/json' }), (req, res) => {
  let event;
  try {
    event = webhook.verify(req.body, req.headers); // throws when the signature or timestamp is wrong
  } catch {
    return res.status(400).send('bad signature');
  }
  // event is the parsed body; req.headers['webhook-id'] identifies it across retries.
  res.sendStatus(204);
});
app.listen(8080);
\`\`\`

**Fastify**

\`\`\`js
import Fastify from 'fastify';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.KASSA_CALLBACK_SECRET); // "whsec_…"
const app = Fastify();

app.register(async (scope) => {
  // In this scope JSON bodies arrive as the raw string the signature covers.
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  scope.post('/kassa/callbacks', async (request, reply) => {
    let event;
    try {
      event = webhook.verify(request.body, request.headers);
    } catch {
      return reply.code(400).send('bad signature');
    }
    return reply.code(204).send();
  });
});
await app.listen({ port: 8080 });
\`\`\`
`.trim();

/** The per-webhook note on signatures and retries. */
export const WEBHOOK_NOTE =
  'Signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`) keyed with ' +
  'your callback secret (`whsec_` + base64); verify over the raw body with the `standardwebhooks` package (see Callbacks above). ' +
  'Any 2xx within the timeout is delivered; anything else is retried with the same `webhook-id` until the retry window ends.';
