/**
 * JSON parsing that keeps numbers as their source text. CoinGecko's simple/price answers prices
 * as JSON numbers (`{"bitcoin":{"eur":57012.12}}`); `JSON.parse` would turn them into binary
 * floats, and Node 20's JSON.parse has no access to the source text. So before parsing, every
 * number token outside a string is wrapped in quotes: the value arrives as the exact digits the
 * provider sent, and money never passes through a float.
 */

/** Rewrite a JSON text so that every number literal becomes a string literal of the same digits. */
export function quoteJsonNumbers(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === '"') {
      // Copy the whole string literal, honouring escapes.
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let j = i + 1;
      while (j < n && /[0-9eE+\-.]/.test(text[j]!)) j++;
      out += `"${text.slice(i, j)}"`;
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** `JSON.parse` with numbers kept as strings; throws SyntaxError on invalid JSON like JSON.parse. */
export function parseJsonLossless(text: string): unknown {
  return JSON.parse(quoteJsonNumbers(text));
}
