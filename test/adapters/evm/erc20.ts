/**
 * A minimal ERC-20 for the tests (6 decimals, like USDT), compiled here with
 * the `solc` npm package (WASM, standard JSON input) and deployed to anvil.
 * `mint` is open to anyone: it is a test token; `multiTransfer` emits several
 * Transfer logs in one transaction (distinct log indexes).
 */
import solc from 'solc';
import type { Abi, Hex, PublicClient, WalletClient } from 'viem';

const SOURCE = `
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
contract TestToken {
  string public name = "Test Tether";
  string public symbol = "USDT";
  uint8 public immutable decimals;
  uint256 public totalSupply;
  mapping(address => uint256) public balanceOf;
  event Transfer(address indexed from, address indexed to, uint256 value);
  constructor(uint8 decimals_) { decimals = decimals_; }
  function mint(address to, uint256 value) external {
    totalSupply += value;
    balanceOf[to] += value;
    emit Transfer(address(0), to, value);
  }
  function transfer(address to, uint256 value) public returns (bool) {
    require(balanceOf[msg.sender] >= value, "balance");
    balanceOf[msg.sender] -= value;
    balanceOf[to] += value;
    emit Transfer(msg.sender, to, value);
    return true;
  }
  function multiTransfer(address[] calldata to, uint256[] calldata value) external {
    for (uint256 i = 0; i < to.length; i++) transfer(to[i], value[i]);
  }
}
// Pays on by an internal call, as a smart-contract wallet does: no transaction is addressed to the payee.
contract Forwarder {
  function forward(address payable to) external payable {
    (bool ok, ) = to.call{value: msg.value}("");
    require(ok, "forward");
  }
}
`;

type Compiled = { abi: Abi; bytecode: Hex };
let compiled: Record<'TestToken' | 'Forwarder', Compiled> | undefined;

function compileAll(): Record<'TestToken' | 'Forwarder', Compiled> {
  if (compiled) return compiled;
  const input = {
    language: 'Solidity',
    sources: { 'TestToken.sol': { content: SOURCE } },
    settings: { evmVersion: 'cancun', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const pick = (name: string): Compiled => {
    const contract = output.contracts['TestToken.sol']![name]!;
    return { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  };
  compiled = { TestToken: pick('TestToken'), Forwarder: pick('Forwarder') };
  return compiled;
}

export function compileTestToken(): Compiled {
  return compileAll().TestToken;
}

/** A contract that forwards the ETH it receives to `to` by an internal call. */
export async function deployForwarder(wallet: WalletClient, client: PublicClient): Promise<{ address: Hex; abi: Abi }> {
  const { abi, bytecode } = compileAll().Forwarder;
  const hash = await wallet.deployContract({ abi, bytecode, account: wallet.account!, chain: null });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress) throw new Error('forwarder deployment failed');
  return { address: receipt.contractAddress, abi };
}

export async function deployTestToken(wallet: WalletClient, client: PublicClient, decimals = 6): Promise<{ address: Hex; abi: Abi }> {
  const { abi, bytecode } = compileTestToken();
  const hash = await wallet.deployContract({ abi, bytecode, args: [decimals], account: wallet.account!, chain: null });
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress) throw new Error('token deployment failed');
  return { address: receipt.contractAddress, abi };
}
