/** The QR code path: deterministic, quiet zone included, finder patterns where scanners look. */
import { describe, expect, it } from 'vitest';
import { qrPath } from '../../widget/qr.js';

/** Rebuild the module grid from the path, to check it structurally. */
function grid(text: string) {
  const { size, d } = qrPath(text);
  const cells = Array.from({ length: size }, () => Array<boolean>(size).fill(false));
  for (const [, x, y, run] of d.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    for (let i = 0; i < Number(run); i++) cells[Number(y)]![Number(x) + i] = true;
  }
  return { size, cells };
}

describe('qrPath', () => {
  it('draws a version-4 code (33 modules) plus a 4-module quiet zone for a BIP21 URI', () => {
    const { size, cells } = grid('bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.01');
    expect(size).toBe(33 + 8);
    expect(cells[0]!.some(Boolean)).toBe(false);
    expect(cells[3]!.some(Boolean)).toBe(false);
    // Top-left finder pattern: a 7-module dark ring with a 3x3 core.
    expect(cells[4]!.slice(4, 11)).toEqual(Array(7).fill(true));
    expect(cells[5]!.slice(4, 11)).toEqual([true, false, false, false, false, false, true]);
    expect(cells[6]!.slice(4, 11)).toEqual([true, false, true, true, true, false, true]);
    // Top-right and bottom-left finders too.
    expect(cells[4]!.slice(size - 11, size - 4)).toEqual(Array(7).fill(true));
    expect(cells[size - 5]!.slice(4, 11)).toEqual(Array(7).fill(true));
  });

  it('is deterministic and grows with the data', () => {
    const uri = 'ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0x52908400098527886E0F7030069857D2E4169EE7&uint256=650000000';
    expect(qrPath(uri)).toEqual(qrPath(uri));
    expect(qrPath(uri).size).toBeGreaterThan(qrPath('bitcoin:x?amount=1').size);
  });
});
