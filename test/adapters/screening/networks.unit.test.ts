/** SDN code → Kassa network, canonical addresses, and the combination of several sources. Pure. */
import { describe, expect, it } from 'vitest';
import { canonicalAddress, matchNetworks, networkOfSdnEntry } from '../../../server/adapters/screening/networks.rules.js';
import { NOT_LISTED, SanctionsListMissing, ScreeningUnavailable, sanctionedAssessment } from '../../../server/adapters/screening/result.js';
import { combineScreenings } from '../../../server/adapters/screening/screening.rules.js';

describe('SDN currency code → Kassa network', () => {
  it('chains map directly; XBT is BTC; other EVM chains are ETH', () => {
    expect(['XBT', 'LTC', 'BCH', 'TRX', 'XRP', 'XLM', 'SOL', 'BSC', 'ETH', 'ETC', 'ARB'].map((c) => networkOfSdnEntry(c, 'x'))).toEqual([
      'BTC', 'LTC', 'BCH', 'TRX', 'XRP', 'XLM', 'SOL', 'BSC', 'ETH', 'ETH', 'ETH',
    ]);
  });

  it('USDT and USDC go by the address: 0x → ETH, T… → TRX, Omni 1…/3… → BTC, Solana base58 → SOL', () => {
    expect(networkOfSdnEntry('USDT', '0x79b36A05A29a73c1da1Ae7723672Dd89738a4742')).toBe('ETH');
    expect(networkOfSdnEntry('USDT', 'THyHT3Lm71cGwzn2kMzAD3vx6aBALi3ni6')).toBe('TRX');
    expect(networkOfSdnEntry('USDT', '3G1iJsxmNnMjNthfP8VfBQzAEtabLuhujB')).toBe('BTC');
    expect(networkOfSdnEntry('USDC', '0xf81858aF67f1F721Aaa9E33E256283B67ADb4615')).toBe('ETH');
    expect(networkOfSdnEntry('USDC', 'vhXuxQaPc1hAwFX73X34iSQvExZFyYnHEYg6H1pWWqXw')).toBe('SOL');
    expect(networkOfSdnEntry('USDT', 'not-an-address')).toBeNull();
  });

  it('currencies that are no Kassa network are skipped', () => {
    for (const c of ['XMR', 'ZEC', 'DASH', 'BTG', 'BSV', 'XVG']) expect(networkOfSdnEntry(c, '1abc')).toBeNull();
  });

  it('an EVM address is matched on both EVM networks', () => {
    expect(matchNetworks('ETH')).toEqual(['ETH', 'BSC']);
    expect(matchNetworks('BSC')).toEqual(['ETH', 'BSC']);
    expect(matchNetworks('TRX')).toEqual(['TRX']);
  });
});

describe('canonical addresses', () => {
  it('EVM: lowercase, whatever the case published or asked', () => {
    expect(canonicalAddress('ETH', '0x79b36A05A29a73c1da1Ae7723672Dd89738a4742')).toBe('0x79b36a05a29a73c1da1ae7723672dd89738a4742');
    expect(canonicalAddress('BSC', '0X79B36A05A29A73C1DA1AE7723672DD89738A4742'.replace('0X', '0x'))).toBe(
      '0x79b36a05a29a73c1da1ae7723672dd89738a4742',
    );
  });

  it('bech32 lowercase; base58 keeps its case', () => {
    expect(canonicalAddress('BTC', 'BC1QXY2KGDYGJRSQTZQ2N0YRF2493P83KKFJHX0WLH')).toBe('bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh');
    expect(canonicalAddress('LTC', 'LTC1QG82MF6ZHSXQHKVDAXS8RL3VSU0RQ3MFD5QKZHQ')).toBe('ltc1qg82mf6zhsxqhkvdaxs8rl3vsu0rq3mfd5qkzhq');
    expect(canonicalAddress('BTC', '1FRkY8H9NqjpNWzNnigEJsELeNUK5XRMHN')).toBe('1FRkY8H9NqjpNWzNnigEJsELeNUK5XRMHN');
    expect(canonicalAddress('TRX', 'THyHT3Lm71cGwzn2kMzAD3vx6aBALi3ni6')).toBe('THyHT3Lm71cGwzn2kMzAD3vx6aBALi3ni6');
  });

  it('BCH: legacy and CashAddr (with or without prefix, any case) are the same key hash', () => {
    const legacy = canonicalAddress('BCH', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu');
    expect(legacy).toBe('p2pkh:76a04053bda0a88bda5177b86a15c3b29f559873');
    expect(canonicalAddress('BCH', 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a')).toBe(legacy);
    expect(canonicalAddress('BCH', 'qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a')).toBe(legacy);
    expect(canonicalAddress('BCH', 'BITCOINCASH:QPM2QSZNHKS23Z7629MMS6S4CWEF74VCWVY22GDX6A')).toBe(legacy);
    expect(canonicalAddress('BCH', 'garbage')).toBe('garbage');
    // legacy P2SH (3…) and its CashAddr; a legacy address whose checksum is off stays as written
    expect(canonicalAddress('BCH', '3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC')).toBe('p2sh:76a04053bda0a88bda5177b86a15c3b29f559873');
    expect(canonicalAddress('BCH', 'bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq')).toBe('p2sh:76a04053bda0a88bda5177b86a15c3b29f559873');
    expect(canonicalAddress('BCH', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggv')).toBe('1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggv');
  });

  it('XLM: uppercase', () => {
    expect(canonicalAddress('XLM', 'gabc')).toBe('GABC');
  });
});

describe('several sources, one answer', () => {
  const hit = sanctionedAssessment('NORTHWIND OTC, S.R.O.');
  const down = new ScreeningUnavailable('chainalysis', 'timeout', 'no answer');

  it('a hit wins even when another source cannot answer', () => {
    expect(combineScreenings([{ source: 'chainalysis', error: down }, { source: 'ofac', result: hit }])).toBe(hit);
  });

  it('no hit and one source silent → cannot answer (review), never a pass', () => {
    expect(() => combineScreenings([{ source: 'ofac', result: NOT_LISTED }, { source: 'chainalysis', error: down }])).toThrow(down);
    const missing = new SanctionsListMissing('ofac');
    expect(() => combineScreenings([{ source: 'ofac', error: missing }])).toThrow(SanctionsListMissing);
  });

  it('all clear → not listed, score 0.0; no source → cannot answer', () => {
    expect(combineScreenings([{ source: 'ofac', result: NOT_LISTED }, { source: 'chainalysis', result: NOT_LISTED }])).toEqual({
      riskScore: '0.0',
      addressOwner: { name: 'Unknown', category: 'unknown' },
      sourceRiskEntities: [],
      destinationRiskEntities: [],
    });
    expect(() => combineScreenings([])).toThrow(ScreeningUnavailable);
  });
});
