/**
 * The QR code path: a decoder (`qr`, an independent implementation) reads
 * back exactly the payment URI; quiet zone included, finder patterns where
 * scanners look; deterministic.
 */
import decodeQR from 'qr/decode.js';
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

/** Rasterise the path at `scale` pixels a module, black on white, and decode it as a camera would. */
function scan(text: string, scale = 4): string {
  const { size, cells } = grid(text);
  const width = size * scale;
  const data = new Uint8Array(width * width * 4).fill(255);
  for (let y = 0; y < width; y++) {
    for (let x = 0; x < width; x++) {
      if (!cells[Math.floor(y / scale)]![Math.floor(x / scale)]) continue;
      const i = (y * width + x) * 4;
      data[i] = data[i + 1] = data[i + 2] = 0;
    }
  }
  return decodeQR({ width, height: width, data });
}

const URIS = [
  'bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.01',
  'ethereum:0xdAC17F958D2ee523a2206206994597C13D831ec7@1/transfer?address=0x52908400098527886E0F7030069857D2E4169EE7&uint256=650000000',
  'solana:7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU?amount=1.5&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  'tron:TJRabPrwbZy45sbavfcjinPJC18kjpRTv8?amount=12.5',
  'web+stellar:pay?destination=GAHK7EEG2WWHVKDNT4CEQFZGKF2LGDSW2IVM4S5DP42RBW3K6BTODB4A&amount=3&memo=90125&memo_type=MEMO_ID',
];

describe('qrPath', () => {
  it.each(URIS)('decodes back to the payment URI: %s', (uri) => {
    expect(scan(uri)).toBe(uri);
  });

  it('surrounds the code with a 4-module quiet zone and puts the three finder patterns in their corners', () => {
    const { size, cells } = grid(URIS[0]!);
    expect((size - 8 - 17) % 4).toBe(0); // a QR side is 17 + 4 × version
    for (const row of [0, 1, 2, 3, size - 4, size - 1]) expect(cells[row]!.some(Boolean)).toBe(false);
    for (const row of cells) expect([...row.slice(0, 4), ...row.slice(size - 4)].some(Boolean)).toBe(false);
    // Top-left finder pattern: a 7-module dark ring with a 3x3 core.
    expect(cells[4]!.slice(4, 11)).toEqual(Array(7).fill(true));
    expect(cells[5]!.slice(4, 11)).toEqual([true, false, false, false, false, false, true]);
    expect(cells[6]!.slice(4, 11)).toEqual([true, false, true, true, true, false, true]);
    // Top-right and bottom-left finders too.
    expect(cells[4]!.slice(size - 11, size - 4)).toEqual(Array(7).fill(true));
    expect(cells[size - 5]!.slice(4, 11)).toEqual(Array(7).fill(true));
  });

  it('is deterministic and grows with the data', () => {
    expect(qrPath(URIS[1]!)).toEqual(qrPath(URIS[1]!));
    expect(qrPath(URIS[1]!).size).toBeGreaterThan(qrPath('bitcoin:x?amount=1').size);
  });
});
