/**
 * `npm run example:create-payment`: sign and send one POST /v1/payments and
 * print the paymentUrl. Reads KASSA_URL, KASSA_BUSINESS_ID, KASSA_API_KEY and
 * KASSA_API_SECRET (printed by the first `npm start`). Optional: AMOUNT
 * (default 25.00) and CURRENCY (default EUR).
 */
import { randomUUID } from 'node:crypto';
import { authorizationHeader } from '../server/edges/rest/signature.rules.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (!value) {
    process.stderr.write(`${name} is not set: copy the command printed by the first \`npm start\`, or create a key with \`npm run kassa -- business:create --name Shop\`.\n`);
    process.exit(2);
  }
  return value;
};

const baseUrl = env('KASSA_URL', 'http://localhost:3000').replace(/\/+$/, '');
const body = JSON.stringify({
  clientPaymentId: `example-${randomUUID()}`,
  businessId: env('KASSA_BUSINESS_ID'),
  locale: 'en-US',
  displayCurrency: env('CURRENCY', 'EUR'),
  displayAmount: env('AMOUNT', '25.00'),
  redirectUrl: 'https://example.com/thanks',
});
const path = '/v1/payments';
const response = await fetch(`${baseUrl}${path}`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    authorization: authorizationHeader(env('KASSA_API_KEY'), env('KASSA_API_SECRET'), { method: 'POST', path, body }),
  },
  body,
});
const text = await response.text();
if (!response.ok) {
  process.stderr.write(`HTTP ${response.status}\n${text}\n`);
  process.exit(1);
}
const { paymentInfo, paymentUrl } = JSON.parse(text) as { paymentInfo: { paymentId: string; status: string }; paymentUrl: string };
process.stdout.write(`payment ${paymentInfo.paymentId} is ${paymentInfo.status}\npaymentUrl: ${paymentUrl}\n`);
