/**
 * The QR code of a payment URI, drawn as one SVG path with the
 * `qrcode-generator` package: byte mode, error correction M, the smallest
 * version that fits, and the 4-module quiet zone scanners need. Pure.
 */
import qrcode from 'qrcode-generator';

export type QrPath = { /** Side in modules, quiet zone included. */ size: number; /** Dark modules, horizontal runs merged. */ d: string };

export function qrPath(text: string, margin = 4): QrPath {
  const qr = qrcode(0, 'M');
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  let d = '';
  for (let y = 0; y < n; y++) {
    for (let x = 0; x < n; ) {
      let run = 0;
      while (x + run < n && qr.isDark(y, x + run)) run++;
      if (run) d += `M${x + margin} ${y + margin}h${run}v1h-${run}z`;
      x += run || 1;
    }
  }
  return { size: n + margin * 2, d };
}
