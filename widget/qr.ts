/**
 * The QR code of a payment URI, drawn as one SVG path with `lean-qr/nano`
 * (the library's 2 KB build: it encodes the bytes of a string at a chosen
 * minimum error correction, which is all a payment URI needs): correction
 * M or better, the smallest version that fits, and the 4-module quiet zone
 * scanners need. Pure.
 */
import { correction, generate } from 'lean-qr/nano';

export type QrPath = { /** Side in modules, quiet zone included. */ size: number; /** Dark modules, horizontal runs merged. */ d: string };

export function qrPath(text: string, margin = 4): QrPath {
  const code = generate(text, { minCorrectionLevel: correction.M });
  const n = code.size;
  let d = '';
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; ) {
      let run = 0;
      while (x + run < n && code.get(x + run, y)) run++;
      if (run) d += `M${x + margin} ${y + margin}h${run}v1h-${run}z`;
      x += run || 1;
    }
  }
  return { size: n + margin * 2, d };
}
