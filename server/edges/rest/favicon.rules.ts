/**
 * Kassa's favicon: a white "K" on a blue rounded square, as SVG and as a
 * 16×16 ICO (what browsers ask /favicon.ico for). The ICO is drawn from a
 * bitmap written here, so no binary file has to be kept. Pure.
 */

const BLUE = [0xad, 0x5c, 0x0b, 0xff] as const; // B, G, R, A of #0b5cad
const WHITE = [0xff, 0xff, 0xff, 0xff] as const;

export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0b5cad"/>' +
  '<path d="M4 3h2v4l4-4h2.6l-4.3 4.6L13 13h-2.6L7 9.1 6 10.1V13H4z" fill="#fff"/></svg>';

/** 16 rows, top first: '#' white, '.' blue, ' ' transparent corner. */
const ROWS = [
  ' .............. ',
  '................',
  '................',
  '....##.....##...',
  '....##....##....',
  '....##...##.....',
  '....##..##......',
  '....##.##.......',
  '....####........',
  '....##.##.......',
  '....##..##......',
  '....##...##.....',
  '....##....##....',
  '....##.....##...',
  '................',
  ' .............. ',
];

/** A 16×16 32-bit ICO: ICONDIR, one ICONDIRENTRY, a BITMAPINFOHEADER, BGRA pixels bottom-up, an empty AND mask. */
export function faviconIco(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  ROWS.forEach((row, y) => {
    [...row].forEach((c, x) => {
      const colour = c === '#' ? WHITE : c === '.' ? BLUE : [0, 0, 0, 0];
      pixels.set(colour, ((size - 1 - y) * size + x) * 4);
    });
  });
  const mask = Buffer.alloc(size * 4); // 1 bit a pixel, rows padded to 4 bytes; alpha already says what is transparent
  const header = Buffer.alloc(40);
  header.writeUInt32LE(40, 0); // header size
  header.writeInt32LE(size, 4);
  header.writeInt32LE(size * 2, 8); // an icon's height counts the XOR and AND bitmaps
  header.writeUInt16LE(1, 12); // planes
  header.writeUInt16LE(32, 14); // bits per pixel
  const image = Buffer.concat([header, pixels, mask]);
  const dir = Buffer.alloc(6 + 16);
  dir.writeUInt16LE(0, 0);
  dir.writeUInt16LE(1, 2); // type: icon
  dir.writeUInt16LE(1, 4); // one image
  dir.writeUInt8(size, 6);
  dir.writeUInt8(size, 7);
  dir.writeUInt16LE(1, 10); // planes
  dir.writeUInt16LE(32, 12); // bits per pixel
  dir.writeUInt32LE(image.length, 14);
  dir.writeUInt32LE(dir.length, 18);
  return Buffer.concat([dir, image]);
}
