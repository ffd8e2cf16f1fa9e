/**
 * The first key given twice in one JSON object, or null. `JSON.parse` keeps the last of two equal
 * keys, another reader (a proxy, a log, the merchant's own audit) may keep the first: a body that
 * reads one way to Kassa and another to them is refused instead (RFC 8259 §4: names SHOULD be unique;
 * I-JSON, RFC 7493, makes it MUST). Keys compare after their escapes are read (`"a"` and `"\u0061"`
 * are the same key). Expects text `JSON.parse` accepted; pure.
 */
export function duplicateKey(json: string): string | null {
  // One entry per open object (its keys so far, its path) or array (null keys).
  const open: { keys: Set<string> | null; path: string }[] = [];
  let lastKey = '';
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = open[open.length - 1];
      const path = parent ? (parent.keys ? join(parent.path, lastKey) : parent.path) : '';
      open.push({ keys: c === 0x7b ? new Set() : null, path });
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
    } else if (c === 0x22 /* " */) {
      const end = stringEnd(json, i);
      const raw = json.slice(i, end + 1);
      i = end;
      let j = end + 1;
      while (j < json.length && isSpace(json.charCodeAt(j))) j++;
      const top = open[open.length - 1];
      if (json.charCodeAt(j) === 0x3a /* : */ && top?.keys) {
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key)) return join(top.path, key);
        top.keys.add(key);
        lastKey = key;
      }
    }
  }
  return null;
}

/** The index of the quote that closes the string opening at `start` (a quote preceded by an odd run of backslashes is escaped). */
function stringEnd(json: string, start: number): number {
  let end = json.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (json.charCodeAt(end - 1 - slashes) === 0x5c /* \ */) slashes++;
    if (slashes % 2 === 0) return end;
    end = json.indexOf('"', end + 1);
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
