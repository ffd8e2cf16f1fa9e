import { describe, expect, it } from 'vitest';
import { command, optionsOf } from '../../../server/edges/cli/command.js';

describe('a CLI command from its usage line', () => {
  it('reads each flag once: a flag followed by a placeholder or an example value takes a string, a bare flag is a boolean', () => {
    expect(optionsOf('deposit:simulate --payment <id> --amount <a> [--risk-score <0-10>] [--no-confirm] [--limit 50]')).toEqual({
      payment: { type: 'string' },
      amount: { type: 'string' },
      'risk-score': { type: 'string' },
      'no-confirm': { type: 'boolean' },
      limit: { type: 'string' },
    });
  });

  it('reads past brackets, alternatives, line breaks and the repeat mark', () => {
    expect(optionsOf('x [--approval-policy none|one|two]\n      [--allowed-networks CUR=NET,NET|all]… [--json]')).toEqual({
      'approval-policy': { type: 'string' },
      'allowed-networks': { type: 'string' },
      json: { type: 'boolean' },
    });
  });

  it('splits name from usage as the help prints them, and lets a command add what a usage line cannot say', async () => {
    const c = command('business:update --business <id> [--allowed-networks CUR=NET|all]…', 'change settings', async () => ({ json: null, human: '' }), {
      options: { 'allowed-networks': { type: 'string', multiple: true } },
    });
    expect(c.name).toBe('business:update');
    expect(c.usage).toBe('--business <id> [--allowed-networks CUR=NET|all]…');
    expect(c.options).toEqual({ business: { type: 'string' }, 'allowed-networks': { type: 'string', multiple: true } });
    expect(command('migrate', 'apply the migrations', async () => ({ json: null, human: '' }))).toMatchObject({ name: 'migrate', usage: '', options: {} });
  });
});
