/** The checkout's decisions, as pure functions of the view: phase, completion, redirect, progress, labels. */
import { describe, expect, it } from 'vitest';
import { parsePaymentUrl, isNotFound } from '../../widget/api.js';
import {
  amountLabel, backUrl, dueAmount, groupOptions, headlineKey, isComplete, networkLabel, networkShort, owesMore, phaseOf, redirectPlan, secondsLeft, showsAddress,
  settledIds, showsCountdown, showsPay, sinceOpened, stepsOf, tagKeys, toneOf, type CheckoutDeposit, type CheckoutView,
} from '../../widget/checkout-state.js';
import { sumDecimals } from '../../widget/format.js';
import { completeDetail, statusDetail } from '../../widget/events.js';

const view = (over: Partial<CheckoutView> = {}): CheckoutView => ({
  status: 'PENDING', type: 'ONE_TIME', language: 'en', expiresAt: 1_800_000_000, displayCurrency: 'EUR', displayAmount: '600.00',
  depositCurrency: 'BTC', network: 'BTC', depositAmount: '0.01', walletAddress: 'bc1qexample', destinationTag: null,
  paymentUri: 'bitcoin:bc1qexample?amount=0.01', paid: '0', remaining: '0.01', redirectUrl: null, redirectMode: 'PARENT',
  options: [], deposits: [], merchantName: 'Demo shop', testMode: true, customerFee: null, stillDue: '0.01', serverTime: 1_799_999_000, ...over,
});
const deposit = (status: string, over: Partial<CheckoutDeposit> = {}): CheckoutDeposit => ({
  id: '1', status, currency: 'BTC', network: 'BTC', amount: '0.01', transactionId: 'tx', receivedAt: 1_700_000_000, ...over,
});

describe('phaseOf', () => {
  it.each([
    ['NEW', [], 'choose'],
    ['PENDING', [], 'pay'],
    ['AWAITING', [deposit('UNCONFIRMED')], 'confirming'],
    ['AWAITING', [deposit('COMPLIANCE_REVIEW')], 'confirming'],
    ['AWAITING', [deposit('CONFIRMED', { amount: '0.004' })], 'underpaid'],
    ['DEPOSITED', [deposit('CONFIRMED')], 'received'],
    ['OVERPAID', [deposit('CONFIRMED', { amount: '0.02' })], 'received'],
    ['EXPIRED', [], 'expired'],
    ['BLOCKED', [deposit('BLOCKED')], 'blocked'],
    ['UNPROCESSABLE', [deposit('UNPROCESSABLE')], 'unprocessable'],
    ['FAILED', [deposit('FAILED')], 'failed'],
    ['SOMETHING_NEW', [], 'pay'],
  ])('%s with %j deposits is %s', (status, deposits, phase) => {
    expect(phaseOf(view({ status, deposits: deposits as CheckoutDeposit[] }))).toBe(phase);
  });

  it('treats a REUSABLE payment with a confirmed deposit as complete whatever its status', () => {
    const reusable = view({ type: 'REUSABLE', status: 'AWAITING', expiresAt: null, deposits: [deposit('CONFIRMED'), deposit('UNCONFIRMED', { id: '2' })] });
    expect(isComplete(reusable)).toBe(true);
    expect(phaseOf(reusable)).toBe('received');
    expect(isComplete(view({ type: 'REUSABLE', status: 'AWAITING', deposits: [deposit('UNCONFIRMED')] }))).toBe(false);
  });

  it('is not complete before a deposit is received', () => {
    for (const status of ['NEW', 'PENDING', 'AWAITING', 'EXPIRED', 'BLOCKED', 'UNPROCESSABLE', 'FAILED']) expect(isComplete(view({ status }))).toBe(false);
  });
});

describe('what each phase shows', () => {
  it('shows the address only while the customer can pay', () => {
    expect(['pay', 'underpaid', 'unprocessable', 'failed'].every((p) => showsAddress(p as never))).toBe(true);
    expect(['choose', 'confirming', 'received', 'expired', 'blocked'].some((p) => showsAddress(p as never))).toBe(false);
  });

  it('counts down only for open ONE_TIME payments', () => {
    expect(showsCountdown(view(), 'pay')).toBe(true);
    expect(showsCountdown(view({ expiresAt: null }), 'pay')).toBe(false);
    expect(showsCountdown(view({ status: 'DEPOSITED' }), 'received')).toBe(false);
    expect(showsCountdown(view({ status: 'EXPIRED' }), 'expired')).toBe(false);
  });

  it('computes the seconds left, never below zero', () => {
    expect(secondsLeft(1000, 400_500)).toBe(600);
    expect(secondsLeft(1000, 2_000_000)).toBe(0);
    expect(secondsLeft(null, 0)).toBeNull();
  });

  it('names the headline: compliance review is not the same wait as confirmations', () => {
    expect(headlineKey(view(), 'pay')).toBe('waiting');
    expect(headlineKey(view({ deposits: [deposit('UNCONFIRMED')] }), 'confirming')).toBe('confirming');
    expect(headlineKey(view({ deposits: [deposit('COMPLIANCE_REVIEW')] }), 'confirming')).toBe('review');
    expect(headlineKey(view(), 'expired')).toBe('expired');
    expect(toneOf('received')).toBe('success');
    expect(toneOf('blocked')).toBe('danger');
    expect(toneOf('underpaid')).toBe('warning');
  });

  it('walks seen → confirming → received', () => {
    expect(stepsOf('pay')).toBeNull();
    expect(stepsOf('confirming')).toEqual(['done', 'current', 'todo']);
    expect(stepsOf('received')).toEqual(['done', 'done', 'done']);
  });

  it('groups the NEW options by currency, in the server order', () => {
    const groups = groupOptions([
      { currency: 'BTC', network: 'BTC', amount: '0.01' },
      { currency: 'USDT', network: 'ETH', amount: '650' },
      { currency: 'USDT', network: 'TRX', amount: '650' },
    ]);
    expect(groups.map((g) => [g.currency, g.options.map((o) => o.network)])).toEqual([['BTC', ['BTC']], ['USDT', ['ETH', 'TRX']]]);
  });

  it('labels networks with the token standard when the currency is a token', () => {
    expect(networkLabel('ETH', 'USDT')).toBe('Ethereum (ERC-20)');
    expect(networkLabel('ETH', 'ETH')).toBe('Ethereum');
    expect(networkLabel('TRX', 'USDT')).toBe('TRON (TRC-20)');
    expect(networkLabel('BSC', 'BNB')).toBe('BNB Smart Chain');
    expect(networkLabel('XRP', 'XRP')).toBe('XRP Ledger');
  });
});

describe('redirect', () => {
  const done = (over: Partial<CheckoutView> = {}) => view({ status: 'DEPOSITED', deposits: [deposit('CONFIRMED')], redirectUrl: 'https://shop.example/thanks?o=1', ...over });

  it('goes to the top window for PARENT and the own frame for SELF', () => {
    expect(redirectPlan(done())).toEqual({ url: 'https://shop.example/thanks?o=1', target: '_top' });
    expect(redirectPlan(done({ redirectMode: 'SELF' }))).toEqual({ url: 'https://shop.example/thanks?o=1', target: '_self' });
  });

  it('does not redirect before completion or without a redirectUrl', () => {
    expect(redirectPlan(done({ status: 'AWAITING', deposits: [deposit('UNCONFIRMED')] }))).toBeNull();
    expect(redirectPlan(done({ redirectUrl: null }))).toBeNull();
    expect(backUrl(view({ redirectUrl: 'https://shop.example/' }))).toBe('https://shop.example/');
  });

  it('never follows a non-http redirectUrl', () => {
    expect(redirectPlan(done({ redirectUrl: 'javascript:alert(1)' }))).toBeNull();
    expect(backUrl(view({ redirectUrl: 'data:text/html,x' }))).toBeNull();
    expect(backUrl(view({ redirectUrl: 'not a url' }))).toBeNull();
  });
});

describe('events', () => {
  it('carries the status change and the completion facts', () => {
    const v = view({ status: 'DEPOSITED', paid: '0.01', remaining: '0' });
    expect(statusDetail(v, 'AWAITING')).toEqual({ status: 'DEPOSITED', previousStatus: 'AWAITING', paid: '0.01', remaining: '0', currency: 'BTC' });
    expect(completeDetail(v, 'https://shop.example/')).toEqual({ status: 'DEPOSITED', paid: '0.01', currency: 'BTC', redirectUrl: 'https://shop.example/' });
  });
});

describe('parsePaymentUrl', () => {
  it('derives the API base and token from the payment URL', () => {
    expect(parsePaymentUrl('https://pay.example/checkout/AbCdEfGhIjKlMnOpQrStUv')).toEqual({ apiUrl: 'https://pay.example/checkout/api', token: 'AbCdEfGhIjKlMnOpQrStUv' });
  });

  it('keeps a path prefix and resolves relative URLs', () => {
    expect(parsePaymentUrl('https://shop.example/kassa/checkout/tok_-1/')).toEqual({ apiUrl: 'https://shop.example/kassa/checkout/api', token: 'tok_-1' });
    expect(parsePaymentUrl('/checkout/abc', 'http://127.0.0.1:3000/x')).toEqual({ apiUrl: 'http://127.0.0.1:3000/checkout/api', token: 'abc' });
  });

  it('refuses what is not a checkout URL', () => {
    expect(parsePaymentUrl('')).toBeNull();
    expect(parsePaymentUrl('https://pay.example/payments/abc')).toBeNull();
    expect(parsePaymentUrl('javascript:alert(1)//checkout/abc')).toBeNull();
  });

  it('recognises NOT_FOUND errors', () => {
    expect(isNotFound({ data: { code: 'NOT_FOUND' } })).toBe(true);
    expect(isNotFound({ data: { code: 'TOO_MANY_REQUESTS' } })).toBe(false);
    expect(isNotFound(new Error('network'))).toBe(false);
  });
});

describe('what is due, and whether to show how to pay', () => {
  it('the whole amount while nothing is paid; the remainder once part is confirmed', () => {
    const pending = view();
    expect(dueAmount(pending, phaseOf(pending))).toBe('0.01');
    const underpaid = view({ status: 'AWAITING', paid: '0.004', remaining: '0.006', stillDue: '0.006', deposits: [deposit('CONFIRMED', { amount: '0.004' })] });
    expect(phaseOf(underpaid)).toBe('underpaid');
    expect(dueAmount(underpaid, 'underpaid')).toBe('0.006');
    expect(showsPay(underpaid, 'underpaid')).toBe(true);
  });

  it('a short transfer in review or confirming: the rest is still due, with the address', () => {
    const review = view({ status: 'AWAITING', stillDue: '0.006', deposits: [deposit('COMPLIANCE_REVIEW', { amount: '0.004' })] });
    expect(phaseOf(review)).toBe('confirming');
    expect(headlineKey(review, 'confirming')).toBe('review');
    expect(owesMore(review, 'confirming')).toBe(true);
    expect(showsPay(review, 'confirming')).toBe(true);
    expect(dueAmount(review, 'confirming')).toBe('0.006');
  });

  it('a transfer on its way that covers it all: nothing more is asked', () => {
    const full = view({ status: 'AWAITING', stillDue: '0', deposits: [deposit('UNCONFIRMED')] });
    expect(owesMore(full, 'confirming')).toBe(false);
    expect(showsPay(full, 'confirming')).toBe(false);
    expect(dueAmount(full, 'confirming')).toBe('0.01');
    // "0.000" is zero too: the check reads the digits, not a float.
    expect(owesMore(view({ stillDue: '0.000' }), 'confirming')).toBe(false);
    expect(owesMore(view({ stillDue: '0.00000001' }), 'confirming')).toBe(true);
    expect(owesMore(view({ stillDue: null }), 'confirming')).toBe(false);
  });

  it('labels the amount by what it is: due, still due after part of it, or only the amount while a covering transfer confirms', () => {
    expect(amountLabel(view(), 'pay')).toBe('amountDue');
    expect(amountLabel(view({ status: 'AWAITING', stillDue: '0.006' }), 'underpaid')).toBe('amountDue');
    expect(amountLabel(view({ status: 'AWAITING', stillDue: '0.006', deposits: [deposit('UNCONFIRMED', { amount: '0.004' })] }), 'confirming')).toBe('stillDue');
    expect(amountLabel(view({ status: 'AWAITING', stillDue: '0', deposits: [deposit('UNCONFIRMED')] }), 'confirming')).toBe('amount');
  });
});

describe('networkShort', () => {
  it.each([
    ['TRX', 'USDT', 'TRC-20'],
    ['ETH', 'USDC', 'ERC-20'],
    ['BSC', 'USDT', 'BEP-20'],
    ['SOL', 'USDC', 'SPL'],
    ['ETH', 'ETH', 'ETH'],
    ['BSC', 'BNB', 'BSC'],
    ['BTC', 'BTC', 'BTC'],
  ])('%s for %s is %s', (network, currency, label) => {
    expect(networkShort(network, currency)).toBe(label);
    expect(networkLabel(network, currency)).toContain(label === network ? '' : label);
  });
});

describe('a REUSABLE link opened again (sinceOpened)', () => {
  const reusable = (status: string, deposits: CheckoutDeposit[], paid: string) =>
    view({ type: 'REUSABLE', status, expiresAt: null, remaining: null, stillDue: null, deposits, paid });

  it('paid by an earlier customer: shows how to pay, not "received", and is not complete', () => {
    const opened = reusable('DEPOSITED', [deposit('CONFIRMED', { id: 'a', amount: '4' }), deposit('FAILED', { id: 'b' })], '4');
    const baseline = settledIds(opened);
    expect([...baseline]).toEqual(['a', 'b']);
    const shown = sinceOpened(opened, baseline);
    expect(shown).toMatchObject({ status: 'PENDING', deposits: [], paid: '0' });
    expect(phaseOf(shown)).toBe('pay');
    expect(isComplete(shown)).toBe(false);
    expect(redirectPlan({ ...shown, redirectUrl: 'https://shop.example/thanks' })).toBeNull();
  });

  it('then a new transfer: confirming while on its way, complete once confirmed, with only what this customer paid', () => {
    const baseline = new Set(['a']);
    const old = deposit('CONFIRMED', { id: 'a', amount: '4' });
    const seen = sinceOpened(reusable('DEPOSITED', [old, deposit('UNCONFIRMED', { id: 'c', amount: '2.5' })], '4'), baseline);
    expect([seen.status, phaseOf(seen)]).toEqual(['AWAITING', 'confirming']);
    const done = sinceOpened(reusable('DEPOSITED', [old, deposit('CONFIRMED', { id: 'c', amount: '2.5' }), deposit('CONFIRMED', { id: 'd', amount: '0.25' })], '6.75'), baseline);
    expect([done.status, phaseOf(done), done.paid]).toEqual(['DEPOSITED', 'received', '2.75']);
  });

  it('keeps a transfer still on its way at opening in sight (it may be this customer\'s, before a reload), and leaves ONE_TIME views as they are', () => {
    const opened = reusable('DEPOSITED', [deposit('CONFIRMED', { id: 'a' }), deposit('UNCONFIRMED', { id: 'mine' })], '0.01');
    expect(phaseOf(sinceOpened(opened, settledIds(opened)))).toBe('confirming');
    const oneTime = view({ status: 'DEPOSITED', deposits: [deposit('CONFIRMED')], paid: '0.01' });
    expect(settledIds(oneTime).size).toBe(0);
    expect(sinceOpened(oneTime, new Set(['1']))).toBe(oneTime);
  });
});

describe('sumDecimals', () => {
  it.each([
    [[], '0'],
    [['0.1', '0.2'], '0.3'],
    [['4', '2.5', '0.25'], '6.75'],
    [['0.000000000000000001', '1'], '1.000000000000000001'],
    [['99999999999999999999.99', '0.01'], '100000000000000000000.00'],
  ])('%j sums to %s, exactly', (amounts, total) => {
    expect(sumDecimals(amounts)).toBe(total);
  });
});

describe('tagKeys', () => {
  it('calls Stellar\'s tag a memo and every other network\'s a destination tag', () => {
    expect(tagKeys('XLM')).toEqual({ label: 'memo', copy: 'copyMemo', note: 'memoNote' });
    expect(tagKeys('XRP')).toEqual({ label: 'tag', copy: 'copyTag', note: 'tagNote' });
    expect(tagKeys(null).label).toBe('tag');
  });
});
