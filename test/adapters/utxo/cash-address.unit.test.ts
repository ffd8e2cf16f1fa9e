import { cashAddressToLockingBytecode, encodeCashAddress, lockingBytecodeToCashAddress } from '@bitauth/libauth';
import { hex } from '@scure/base';
import { describe, expect, it } from 'vitest';
import { cashAddressScript, scriptCashAddress } from '../../../server/adapters/chain/utxo/cash-address.rules.js';

// libauth's own conversions are the oracle: Kassa writes the three scripts itself only to keep
// libauth's WebAssembly instances out of processes that never sign BCH (see the module's header).
const hash20 = hex.decode('f5bf48b397dae70be82b3cca4793f8eb2b6cdac9');
const hash32 = hex.decode('1f'.repeat(16) + 'a0'.repeat(16));
const addresses = [
  encodeCashAddress({ prefix: 'bitcoincash', type: 'p2pkh', payload: hash20 }).address,
  encodeCashAddress({ prefix: 'bitcoincash', type: 'p2sh', payload: hash20 }).address,
  encodeCashAddress({ prefix: 'bchtest', type: 'p2sh', payload: hash32 }).address,
  encodeCashAddress({ prefix: 'bchreg', type: 'p2pkhWithTokens', payload: hash20 }).address,
  encodeCashAddress({ prefix: 'bitcoincash', type: 'p2shWithTokens', payload: hash32 }).address,
];

describe('CashAddr and output scripts', () => {
  it('pays each standard CashAddr with the script libauth writes, and names it back as libauth does', () => {
    for (const address of addresses) {
      const ours = cashAddressScript(address);
      const theirs = cashAddressToLockingBytecode(address);
      if (typeof ours === 'string' || typeof theirs === 'string') throw new Error(`${address}: ${String(ours)} / ${String(theirs)}`);
      expect(hex.encode(ours.script)).toBe(hex.encode(theirs.bytecode));
      expect(ours.prefix).toBe(theirs.prefix);
      const named = lockingBytecodeToCashAddress({ prefix: theirs.prefix as 'bitcoincash', bytecode: theirs.bytecode });
      expect(scriptCashAddress(ours.prefix, ours.script)).toBe(typeof named === 'string' ? named : named.address);
    }
    expect(hex.encode((cashAddressScript(addresses[0]!) as { script: Uint8Array }).script)).toBe(`76a914${hex.encode(hash20)}88ac`);
    expect(hex.encode((cashAddressScript(addresses[2]!) as { script: Uint8Array }).script)).toBe(`aa20${hex.encode(hash32)}87`);
  });

  it('a token-aware address pays the same script as the plain one', () => {
    const plain = cashAddressScript(encodeCashAddress({ prefix: 'bchreg', type: 'p2pkh', payload: hash20 }).address);
    const tokens = cashAddressScript(addresses[3]!);
    expect(hex.encode((tokens as { script: Uint8Array }).script)).toBe(hex.encode((plain as { script: Uint8Array }).script));
  });

  it('refuses what is not a standard CashAddr, and names no address for other scripts', () => {
    expect(typeof cashAddressScript('bitcoincash:qr6m7j9njldwwzlg9v7v53unlr4jkmx6eylep8ekg3')).toBe('string'); // checksum
    expect(typeof cashAddressScript('1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu')).toBe('string'); // legacy base58
    const hash24 = encodeCashAddress({ prefix: 'bitcoincash', type: 'p2pkh', payload: new Uint8Array(24).fill(7) }).address;
    expect(cashAddressScript(hash24)).toMatch(/24 bytes/);
    expect(scriptCashAddress('bitcoincash', hex.decode(`0014${hex.encode(hash20)}`))).toBeNull(); // P2WPKH: not on BCH
    expect(scriptCashAddress('bitcoincash', hex.decode(`76a914${hex.encode(hash20)}88`))).toBeNull(); // truncated
    expect(scriptCashAddress('bitcoincash', hex.decode('6a0568656c6c6f'))).toBeNull(); // OP_RETURN
  });
});
