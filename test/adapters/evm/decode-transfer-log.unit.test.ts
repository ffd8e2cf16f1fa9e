import { decodeEventLog, encodeAbiParameters, encodeEventTopics, getAddress, parseAbiItem, toEventSelector, type Hex } from 'viem';
import { describe, expect, it } from 'vitest';
import { decodeTransferLog, type RpcLog } from '../../../server/adapters/chain/evm/scanner.rules.js';

const EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');
const TOPIC = toEventSelector(EVENT);
const FROM = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4' as Hex;
const TO = '0xAb8483F64d9C6d1EcF9b849Ae677dD3315835cb2' as Hex;

function rpcLog(value: bigint, overrides: Partial<RpcLog> = {}): RpcLog {
  return {
    address: '0xdac17f958d2ee523a2206206994597c13d831ec7',
    topics: encodeEventTopics({ abi: [EVENT], eventName: 'Transfer', args: { from: FROM, to: TO } }) as Hex[],
    data: encodeAbiParameters([{ type: 'uint256' }], [value]),
    blockNumber: '0x10',
    blockHash: `0x${'ab'.repeat(32)}`,
    transactionHash: `0x${'cd'.repeat(32)}`,
    logIndex: '0x7',
    ...overrides,
  };
}

describe('decodeTransferLog', () => {
  it('decodes what viem decodes, with lower-case addresses', () => {
    const log = rpcLog(123_456_789n);
    const viem = decodeEventLog({ abi: [EVENT], topics: log.topics as [Hex, ...Hex[]], data: log.data, strict: true });
    const mine = decodeTransferLog(log, TOPIC)!;
    expect(getAddress(mine.from)).toBe(viem.args.from);
    expect(getAddress(mine.to)).toBe(viem.args.to);
    expect(mine.from).toBe(FROM.toLowerCase());
    expect(mine.value).toBe(viem.args.value);
    expect(mine).toMatchObject({ logIndex: 7, blockNumber: 16n, blockHash: log.blockHash, transactionHash: log.transactionHash });
  });

  it('keeps the largest uint256', () => {
    expect(decodeTransferLog(rpcLog(2n ** 256n - 1n), TOPIC)!.value).toBe(2n ** 256n - 1n);
  });

  it('skips what strict decoding skips: an ERC-721 Transfer (4 topics), a short value, another event, a pending or removed log', () => {
    const log = rpcLog(1n);
    expect(decodeTransferLog({ ...log, topics: [...log.topics, `0x${'00'.repeat(32)}`] }, TOPIC)).toBeNull();
    expect(decodeTransferLog({ ...log, data: '0x01' }, TOPIC)).toBeNull();
    expect(decodeTransferLog({ ...log, topics: [`0x${'11'.repeat(32)}`, ...log.topics.slice(1)] }, TOPIC)).toBeNull();
    expect(decodeTransferLog({ ...log, blockHash: null }, TOPIC)).toBeNull();
    expect(decodeTransferLog({ ...log, removed: true }, TOPIC)).toBeNull();
  });
});
