import { describe, it, expect } from 'vitest';
import { HDKey } from '@scure/bip32';
import { base32nopad, base58, bech32, createBase58check } from '@scure/base';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { hmac } from '@noble/hashes/hmac.js';
import { pbkdf2 } from '@noble/hashes/pbkdf2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { NETWORKS, type Network } from '../../../server/modules/money/catalog.js';
import { deriveDepositAddress, validateAddress, validateDestinationTag } from '../../../server/modules/networks/addresses.rules.js';

const b58check = createBase58check(sha256);

function expectValid(network: Network, address: string): void {
  expect(validateAddress(network, address), `${network} ${address}`).toEqual({ valid: true });
}
function expectInvalid(network: Network, address: string, reason?: RegExp): void {
  const result = validateAddress(network, address);
  expect(result.valid, `${network} ${address}`).toBe(false);
  if (!result.valid) {
    expect(result.reason.length).toBeGreaterThan(0);
    if (reason) expect(result.reason).toMatch(reason);
  }
}

/** Swap the case of the first letter after `skip` characters. */
function flipFirstLetterCase(s: string, skip = 0): string {
  for (let i = skip; i < s.length; i++) {
    const c = s[i]!;
    if (c.toLowerCase() !== c.toUpperCase()) {
      const flipped = c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase();
      return s.slice(0, i) + flipped + s.slice(i + 1);
    }
  }
  throw new Error('no letter to flip');
}

/** Replace the character at `i` with another one from `alphabet`. */
function corrupt(s: string, i: number, alphabet: string): string {
  const replacement = [...alphabet].find((c) => c !== s[i])!;
  return s.slice(0, i) + replacement + s.slice(i + 1);
}
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

describe('validateAddress: BTC (BIP173 / BIP350)', () => {
  // BIP173 and BIP350 test vectors, in the mainnet form Bitcoin Core uses in
  // test/functional/rpc_validateaddress.py (VALID_DATA).
  const valid = [
    'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4',
    'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3',
    'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y',
    'BC1SW50QGDZ25J',
    'bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs',
    'bc1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvses5wp4dt',
    'bc1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvses7epu4h',
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0',
  ];
  it.each(valid)('accepts %s', (address) => expectValid('BTC', address));

  // INVALID_DATA of the same file (BIP173 + BIP350 invalid vectors), with the expected kind of failure.
  const invalid: Array<[string, RegExp]> = [
    ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', /./], // invalid hrp
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', /checksum/], // invalid checksum
    ['BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2', /version/], // BIP173: invalid witness version (17)
    ['bc1rw5uspcuh', /bech32m/],
    ['bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90', /./],
    ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', /20 or 32/], // v0 program of 16 bytes
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', /mix/], // mixed case
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3t4', /mix/],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', /./], // wrong padding
    ['bc1qfysxzmfq2phhyarvv9hxgtjgdajxcw3fpkpph893lw', /padding/], // non-zero padding
    ['bc1gmk9yu', /./], // empty data section
    ['tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', /./],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', /bech32m/], // bech32 instead of bech32m
    ['BC1PFYSXZMFQ2PHHYARVV9HXGTJGFAZYCWJYPQQQF9ZLQ6', /bech32m/],
    ['bc1qfysxzmfq2phhyarvv9hxgtjgfazycwjypqqqfm706a', /bech32 checksum/], // bech32m instead of bech32
    ['BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R', /version/], // witness version 17
    ['bc1pw5dgrnzv', /length/], // 1-byte program
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav', /length/], // 41-byte program
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', /padding/], // >4 bits of padding
  ];
  it.each(invalid)('rejects %s', (address, reason) => expectInvalid('BTC', address, reason));

  it('rejects the BIP173/BIP350 testnet vectors as testnet addresses', () => {
    expectInvalid('BTC', 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', /testnet/);
    expectInvalid('BTC', 'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', /testnet/);
    // Legacy testnet P2PKH (m/n…) and P2SH (2…): version bytes 0x6f / 0xc4 over a valid checksum.
    const h = new Uint8Array(20).fill(7);
    const m = b58check.encode(Uint8Array.of(0x6f, ...h));
    const two = b58check.encode(Uint8Array.of(0xc4, ...h));
    expect(m).toMatch(/^[mn]/);
    expect(two).toMatch(/^2/);
    expectInvalid('BTC', m, /testnet/);
    expectInvalid('BTC', two, /testnet/);
  });

  it('accepts base58check P2PKH/P2SH and rejects a bad checksum', () => {
    expectValid('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'); // genesis coinbase address
    expectValid('BTC', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu');
    expectValid('BTC', '3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC');
    expectInvalid('BTC', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', /checksum/);
  });

  it('rejects surrounding whitespace and empty input', () => {
    expectInvalid('BTC', ' 1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', /whitespace/);
    expectInvalid('BTC', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0\n', /whitespace/);
    expectInvalid('BTC', '', /empty/);
  });
});

describe('validateAddress: LTC', () => {
  it('accepts ltc1 bech32, L…, M… and legacy 3… addresses', () => {
    // Published first addresses of the BIP39 "abandon … about" phrase: BIP84 m/84'/2'/0'/0/0,
    // BIP44 m/44'/2'/0'/0/0 and BIP49 m/49'/2'/0'/0/0.
    expectValid('LTC', 'ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh');
    expectValid('LTC', 'LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez');
    expectValid('LTC', 'M7wtsL7wSHDBJVMWWhtQfTMSYYkyooAAXM');
    expectValid('LTC', '3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC');
    expectValid('LTC', 'LTC1QJMXNZ78NMC8NQ77WUXH25N2ES7RZM5C2RKK4WH');
  });

  it('rejects Bitcoin addresses, corruptions and testnet', () => {
    expectInvalid('LTC', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    expectInvalid('LTC', '1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu', /version/);
    expectInvalid('LTC', corrupt('LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez', 10, B58), /checksum/);
    expectInvalid('LTC', corrupt('ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh', 12, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'));
    const tltc = bech32.encode('tltc', [0, ...bech32.toWords(new Uint8Array(20))]);
    expectInvalid('LTC', tltc, /testnet/);
  });
});

describe('validateAddress: BCH CashAddr', () => {
  // CashAddr spec (https://upgradespecs.bitcoincashnode.org/cashaddr/), legacy ↔ CashAddr translation examples.
  const pairs: Array<[string, string]> = [
    ['1BpEi6DfDAUFd7GtittLSdBeYJvcoaVggu', 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a'],
    ['1KXrWXciRDZUpQwQmuM1DbwsKDLYAYsVLR', 'bitcoincash:qr95sy3j9xwd2ap32xkykttr4cvcu7as4y0qverfuy'],
    ['16w1D5WRVKJuZUsSRzdLp9w3YGcgoxDXb', 'bitcoincash:qqq3728yw0y47sqn6l2na30mcw6zm78dzqre909m2r'],
    ['3CWFddi6m4ndiGyKqzYvsFYagqDLPVMTzC', 'bitcoincash:ppm2qsznhks23z7629mms6s4cwef74vcwvn0h829pq'],
    ['3LDsS579y7sruadqu11beEJoTjdFiFCdX4', 'bitcoincash:pr95sy3j9xwd2ap32xkykttr4cvcu7as4yc93ky28e'],
    ['31nwvkZwyPdgzjBJZXfDmSWsC4ZLKpYyUw', 'bitcoincash:pqq3728yw0y47sqn6l2na30mcw6zm78dzq5ucqzc37'],
  ];

  it.each(pairs)('accepts %s and %s (with/without prefix, either case)', (legacy, cash) => {
    expectValid('BCH', legacy);
    expectValid('BCH', cash);
    expectValid('BCH', cash.slice('bitcoincash:'.length));
    expectValid('BCH', cash.toUpperCase());
    // The pair really is the same hash: CashAddr payload (minus version byte) == legacy payload.
    const words = [...cash.slice(12, -8)].map((c) => 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'.indexOf(c));
    expect(bytesToHex(bech32.fromWords(words).slice(1))).toBe(bytesToHex(b58check.decode(legacy).slice(1)));
  });

  it('rejects mixed case, corrupted checksums, wrong prefixes and testnet', () => {
    const cash = 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a';
    expectInvalid('BCH', flipFirstLetterCase(cash, 12), /mix/);
    expectInvalid('BCH', corrupt(cash, 20, 'qpzry9x8gf2tvdw0s3jn54khce6mua7l'), /checksum/);
    expectInvalid('BCH', cash.replace('bitcoincash:', 'bchtest:'), /checksum|testnet/);
    // Published testnet form of the "abandon … about" m/44'/145'/0'/0/0 address: valid checksum, testnet prefix.
    expectInvalid('BCH', 'bchtest:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x', /testnet/);
    // The checksum covers the prefix: a bchtest body is not a valid prefix-less mainnet address.
    expectInvalid('BCH', 'qqyx49mu0kkn9ftfj6hje6g2wfer34yfnqseeszx8x', /checksum/);
    expectInvalid('BCH', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4');
    expectInvalid('BCH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
  });
});

describe('validateAddress: ETH / BSC (EIP-55)', () => {
  // EIP-55 specification examples.
  const eip55 = [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ];
  it.each(eip55)('accepts %s and rejects it with one letter case flipped', (address) => {
    for (const network of ['ETH', 'BSC'] as const) {
      expectValid(network, address);
      expectValid(network, `0x${address.slice(2).toLowerCase()}`);
      expectValid(network, `0x${address.slice(2).toUpperCase()}`);
      expectInvalid(network, flipFirstLetterCase(address, 2), /bad EIP-55 checksum/);
    }
  });

  it('rejects malformed hex', () => {
    expectInvalid('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe'); // 39 hex digits
    expectInvalid('ETH', '5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'); // no 0x
    expectInvalid('ETH', '0X5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED'); // 0X
    expectInvalid('ETH', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg');
    expectInvalid('ETH', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });
});

describe('validateAddress: TRX', () => {
  const usdt = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'; // USDT TRC-20 contract, hex 41a614f803b6fd780986a42c78ec9c7f77e6ded13c
  it('accepts the USDT contract address', () => {
    expectValid('TRX', usdt);
    expect(bytesToHex(b58check.decode(usdt))).toBe('41a614f803b6fd780986a42c78ec9c7f77e6ded13c');
  });
  it('rejects it with one character changed, and non-TRON base58check', () => {
    expectInvalid('TRX', corrupt(usdt, 10, B58), /checksum/);
    expectInvalid('TRX', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    expectInvalid('TRX', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    // 'T'-prefixed base58check whose payload is not 0x41 || 20 bytes.
    expectInvalid('TRX', b58check.encode(Uint8Array.of(0x41, ...new Uint8Array(19))));
  });
});

describe('validateAddress: XRP', () => {
  const genesis = 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh'; // genesis account
  it('accepts classic addresses', () => {
    expectValid('XRP', genesis);
    expectValid('XRP', 'rrrrrrrrrrrrrrrrrrrrrhoLvTp'); // ACCOUNT_ZERO, all-zero account id
    expectValid('XRP', 'rrrrrrrrrrrrrrrrrrrrBZbvji'); // ACCOUNT_ONE
  });
  it('rejects corrupted, X-addresses and other networks', () => {
    expectInvalid('XRP', corrupt(genesis, 8, 'rpshnaf39wBUDNEGHJKLM4PQRST7VWXYZ2bcdeCg65jkm8oFqi1tuvAxyz'), /checksum/);
    expectInvalid('XRP', 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ', /X-address/);
    expectInvalid('XRP', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    expectInvalid('XRP', 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ');
  });
});

describe('validateAddress: XLM (SEP-23 StrKey)', () => {
  // Vectors from stellar/rs-stellar-strkey tests/tests.rs (SEP-23).
  it('accepts G… account ids', () => {
    expectValid('XLM', 'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ');
    expectValid('XLM', 'GA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQHES5');
  });
  it.each([
    'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJV75ERQ', // too long
    'GAAAAAAAACGC6', // 5-byte key
    'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZA', // length ≡ 1 mod 8
    'GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJUACUSI', // decodes to 36 bytes
    'G47QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVP2I', // version byte low bits 7
    'G=3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQHES5', // padding in stream
    'ga7qynf7sowq3glr2bgmzehxavirza4kvwltjjfc7mgxua74p7ujvsgz', // lower case
  ])('rejects SEP-23 invalid %s', (address) => expectInvalid('XLM', address));
  it('rejects a corrupted checksum, muxed and secret keys', () => {
    expectInvalid('XLM', corrupt('GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ', 20, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'), /checksum/);
    expectInvalid('XLM', 'MA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVAAAAAAAAAAAAAJLK', /[Mm]uxed/);
    expectInvalid('XLM', 'SBU2RRGLXH3E5CQHTD3ODLDF2BWDCYUSSBLLZ5GNW7JXHDIYKXZWHOKR', /secret/);
    expectInvalid('XLM', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh');
  });
});

describe('validateAddress: SOL', () => {
  it('accepts any base58 string decoding to 32 bytes', () => {
    expectValid('SOL', '11111111111111111111111111111111'); // system program = 32 zero bytes
    expect(base58.decode('11111111111111111111111111111111')).toEqual(new Uint8Array(32));
    expectValid('SOL', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'); // SPL token program
  });
  it('rejects too short/long and non-base58', () => {
    expectInvalid('SOL', '1111111111111111111111111111111', /32 bytes/); // 31 zero bytes
    expectInvalid('SOL', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA1', /32 bytes/);
    expectInvalid('SOL', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D0', /base58/);
    expectInvalid('SOL', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expectInvalid('SOL', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
  });
});

describe('validateAddress: cross-network', () => {
  it('rejects a valid address of another network', () => {
    expectInvalid('BTC', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed');
    expectInvalid('BTC', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expectInvalid('BTC', 'LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez');
    expectInvalid('BTC', 'ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh');
    expectInvalid('BTC', 'bitcoincash:qpm2qsznhks23z7629mms6s4cwef74vcwvy22gdx6a');
    expectInvalid('BTC', 'rHb9CJAWyB4rj91VRWn96DkukG4bwdtyTh');
    expectInvalid('BTC', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
    expectInvalid('LTC', 'BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4');
    expectInvalid('ETH', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
    expectInvalid('XRP', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  });
});

describe('deriveDepositAddress: published "abandon … about" vectors', () => {
  // BIP39 test phrase "abandon ×11 about", empty passphrase; the seed is computed here with PBKDF2
  // (BIP39: 2048 rounds of HMAC-SHA512, salt "mnemonic") and matches the published seed.
  const phrase = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
  const seed = pbkdf2(sha512, phrase, 'mnemonic', { c: 2048, dkLen: 64 });

  it('uses the published BIP39 seed', () => {
    expect(bytesToHex(seed)).toBe(
      '5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4',
    );
  });

  // Addresses every BIP44 wallet publishes for this phrase at m/44'/coin'/0'/0/0.
  it('ETH/BSC index 0 is 0x9858EfFD232B4033E47d90003D41EC34EcaEda94 (m/44\'/60\'/0\'/0/0)', () => {
    expect(deriveDepositAddress(seed, 'ETH', 0)).toEqual({ address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' });
    expect(deriveDepositAddress(seed, 'BSC', 0)).toEqual({ address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' });
  });
  it('TRX index 0 is TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH (m/44\'/195\'/0\'/0/0)', () => {
    expect(deriveDepositAddress(seed, 'TRX', 0)).toEqual({ address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' });
  });
  it('BCH index 0 is bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6 (m/44\'/145\'/0\'/0/0)', () => {
    expect(deriveDepositAddress(seed, 'BCH', 0)).toEqual({ address: 'bitcoincash:qqyx49mu0kkn9ftfj6hje6g2wfer34yfnq5tahq3q6' });
  });
  it('XRP shared account is rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3 (m/44\'/144\'/0\'/0/0), tag = index + 1', () => {
    expect(deriveDepositAddress(seed, 'XRP', 0)).toEqual({ address: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', destinationTag: '1' });
    expect(deriveDepositAddress(seed, 'XRP', 41)).toEqual({ address: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', destinationTag: '42' });
  });
  it('BTC/LTC segwit programs equal the hash160 of the published legacy BIP44 addresses', () => {
    // Published P2PKH addresses: BTC m/44'/0'/0'/0/0 and /1, LTC m/44'/2'/0'/0/0. Our P2WPKH address
    // commits to the same key hash, so its witness program must equal the legacy payload.
    const program = (address: string) => {
      const { words } = bech32.decode(address as `${string}1${string}`);
      expect(words[0]).toBe(0);
      return bytesToHex(bech32.fromWords(words.slice(1)));
    };
    const legacyHash = (address: string) => bytesToHex(b58check.decode(address).slice(1));
    const btc0 = deriveDepositAddress(seed, 'BTC', 0).address;
    const btc1 = deriveDepositAddress(seed, 'BTC', 1).address;
    const ltc0 = deriveDepositAddress(seed, 'LTC', 0).address;
    expect(btc0.startsWith('bc1q')).toBe(true);
    expect(ltc0.startsWith('ltc1q')).toBe(true);
    expect(program(btc0)).toBe(legacyHash('1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA'));
    expect(program(btc1)).toBe(legacyHash('1Ak8PffB2meyfYnbXZR9EGfLfFZVpzJvQP'));
    expect(program(ltc0)).toBe(legacyHash('LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez'));
  });
});

describe('deriveDepositAddress: BIP32 test vector 1 seed', () => {
  const seed = hexToBytes('000102030405060708090a0b0c0d0e0f');
  const indexes = [0, 1, 2, 1000, 2 ** 31 - 1];
  // Networks whose addresses share a format (and so validate for each other).
  const twin: Partial<Record<Network, Network>> = { ETH: 'BSC', BSC: 'ETH' };

  it('the library reproduces the BIP32 TV1 master key', () => {
    expect(HDKey.fromMasterSeed(seed).publicExtendedKey).toBe(
      'xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8',
    );
  });

  it.each(NETWORKS.map((n) => [n]))('%s: deterministic, distinct per index, valid only where it belongs', (network) => {
    const seen = new Set<string>();
    for (const index of indexes) {
      const first = deriveDepositAddress(seed, network, index);
      expect(deriveDepositAddress(Uint8Array.from(seed), network, index)).toEqual(first);
      expectValid(network, first.address);
      for (const other of NETWORKS) {
        if (other !== network && other !== twin[network]) expectInvalid(other, first.address);
      }
      if (network === 'XRP' || network === 'XLM') {
        expect(first.destinationTag).toBe(String(index + 1));
        expect(validateDestinationTag(network, first.destinationTag!)).toEqual({ valid: true });
        seen.add(first.destinationTag!);
      } else {
        expect(first.destinationTag).toBeUndefined();
        seen.add(first.address);
      }
    }
    expect(seen.size).toBe(indexes.length);
    // A different seed gives a different address (or account, for the shared-account networks).
    const otherSeed = hexToBytes('0f0e0d0c0b0a09080706050403020100');
    expect(deriveDepositAddress(otherSeed, network, 0).address).not.toBe(deriveDepositAddress(seed, network, 0).address);
  });

  it('BTC program is the BIP32 library\'s own hash160 of m/44\'/0\'/0\'/0/i', () => {
    for (const index of [0, 7]) {
      const key = HDKey.fromMasterSeed(seed).derive(`m/44'/0'/0'/0/${index}`);
      const { words } = bech32.decode(deriveDepositAddress(seed, 'BTC', index).address as `${string}1${string}`);
      expect(bytesToHex(bech32.fromWords(words.slice(1)))).toBe(bytesToHex(key.pubKeyHash!));
      expect(bytesToHex(key.pubKeyHash!)).toBe(bytesToHex(ripemd160(sha256(key.publicKey!))));
    }
  });

  it('SOL/XLM keys follow the documented HMAC-SHA512 scheme', () => {
    const pub = (network: string, index: number) =>
      ed25519.getPublicKey(hmac(sha512, seed, utf8ToBytes(`kassa/${network}/${index}`)).slice(0, 32));
    expect(base58.decode(deriveDepositAddress(seed, 'SOL', 3).address)).toEqual(pub('SOL', 3));
    const xlm = base32nopad.decode(deriveDepositAddress(seed, 'XLM', 3).address);
    expect(xlm.length).toBe(35);
    expect(xlm[0]).toBe(6 << 3);
    expect(xlm.slice(1, 33)).toEqual(pub('XLM', 0)); // shared account = index 0
  });

  it('rejects bad indexes and seeds', () => {
    for (const index of [-1, 1.5, 2 ** 31, Number.NaN]) {
      expect(() => deriveDepositAddress(seed, 'BTC', index)).toThrow(RangeError);
    }
    expect(() => deriveDepositAddress(new Uint8Array(15), 'ETH', 0)).toThrow(RangeError);
    expect(() => deriveDepositAddress(new Uint8Array(65), 'SOL', 0)).toThrow(RangeError);
  });
});

describe('validateDestinationTag', () => {
  it('XRP: canonical uint32 decimal', () => {
    expect(validateDestinationTag('XRP', '0')).toEqual({ valid: true });
    expect(validateDestinationTag('XRP', '4294967295')).toEqual({ valid: true });
    for (const tag of ['4294967296', '-1', '01x', '', '01', ' 1', '1.0', '+1', '99999999999999999999999']) {
      expect(validateDestinationTag('XRP', tag).valid, JSON.stringify(tag)).toBe(false);
    }
  });
  it('XLM: canonical uint64 decimal', () => {
    expect(validateDestinationTag('XLM', '0')).toEqual({ valid: true });
    expect(validateDestinationTag('XLM', '18446744073709551615')).toEqual({ valid: true });
    expect(validateDestinationTag('XLM', '18446744073709551616').valid).toBe(false);
    expect(validateDestinationTag('XLM', '-5').valid).toBe(false);
  });
  it('other networks take no tag', () => {
    for (const network of ['BTC', 'LTC', 'BCH', 'ETH', 'BSC', 'SOL', 'TRX'] as const) {
      const result = validateDestinationTag(network, '1');
      expect(result.valid).toBe(false);
      if (!result.valid) expect(result.reason).toMatch(/does not use/);
    }
  });
});
