/**
 * Import of OFAC's SDN list in its advanced XML form (sdn_advanced.xml) into PostgreSQL: the
 * digital-currency addresses only, with the name of the party that holds them.
 *
 * The file (≈100 MB) is streamed through saxes, never held whole in memory. Its structure:
 * `ReferenceValueSets/FeatureTypeValues/FeatureType[@ID]` names each feature type ("Digital
 * Currency Address - XBT", "- ETH", …; the IDs are read from the file, never assumed), then
 * `DistinctParties/DistinctParty[@FixedRef]/Profile` holds the party's `Identity/Alias`
 * (`Primary="true"` → `DocumentedName/DocumentedNamePart/NamePartValue`) and its
 * `Feature[@FeatureTypeID]/FeatureVersion/VersionDetail` values, the addresses.
 *
 * Import replaces the whole list in one transaction (readers see the old list or the new one);
 * a file that fails to parse, or has no digital-currency feature types or no parties, changes
 * nothing. Same file twice → the same rows.
 */
import { createReadStream } from 'node:fs';
import type postgres from 'postgres';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { canonicalAddress, networkOfSdnEntry, type KassaNetwork } from './networks.rules.js';

export type Sql = postgres.Sql;

export const OFAC_LIST = 'ofac';
const DC_PREFIX = 'Digital Currency Address - ';

/** One digital-currency address of one party, as listed. */
export type SdnAddress = { currency: string; address: string; partyRef: string; partyName: string };

export type SdnParseResult = {
  /** DateOfIssue, YYYY-MM-DD, when present. */
  published: string | null;
  /** FeatureType ID → SDN currency code, as the file defines them. */
  featureTypes: Map<string, string>;
  addresses: SdnAddress[];
  parties: number;
};

/** The file is not an SDN advanced XML we can trust to replace the list. */
export class SdnFormatError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`SDN advanced XML: ${message}`, options);
    this.name = 'SdnFormatError';
  }
}

const local = (name: string) => name.slice(name.indexOf(':') + 1);

/** Stream-parse an SDN advanced XML; `chunks` are its bytes or text in order. */
export async function parseSdnAdvanced(chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>): Promise<SdnParseResult> {
  const parser = new SaxesParser({ xmlns: false });
  const featureTypes = new Map<string, string>();
  const addresses: SdnAddress[] = [];
  let parties = 0;
  let published: string | null = null;

  const path: string[] = [];
  let text = '';
  // Current FeatureType definition
  let featureTypeId: string | null = null;
  // DateOfIssue parts
  const issue: Record<string, string> = {};
  // Current party / profile
  let partyRef: string | null = null;
  let primaryName: string | null = null;
  let firstName: string | null = null;
  let aliasPrimary = false;
  let aliasParts: string[] | null = null; // name parts of the alias's first DocumentedName
  let documentedNames = 0;
  let pending: { currency: string; address: string }[] = [];
  let featureCurrency: string | null = null;
  let sawParties = false;
  let error: Error | null = null;

  parser.on('error', (e) => {
    error ??= e;
  });
  parser.on('opentag', (tag: SaxesTagPlain) => {
    const name = local(tag.name);
    const attr = (a: string) => {
      const v = tag.attributes[a];
      return typeof v === 'string' ? v : undefined;
    };
    path.push(name);
    text = '';
    switch (name) {
      case 'FeatureType':
        featureTypeId = attr('ID') ?? null;
        break;
      case 'DistinctParties':
        sawParties = true;
        if (![...featureTypes.values()].length) error ??= new SdnFormatError('DistinctParties before any digital-currency FeatureType');
        break;
      case 'DistinctParty':
        partyRef = attr('FixedRef') ?? null;
        primaryName = firstName = null;
        pending = [];
        break;
      case 'Alias':
        aliasPrimary = attr('Primary') === 'true';
        aliasParts = [];
        documentedNames = 0;
        break;
      case 'DocumentedName':
        documentedNames++;
        break;
      case 'Feature':
        featureCurrency = featureTypes.get(attr('FeatureTypeID') ?? '') ?? null;
        break;
    }
  });
  parser.on('text', (t) => {
    text += t;
  });
  parser.on('closetag', (tag: SaxesTagPlain) => {
    const name = local(tag.name);
    const parent = path[path.length - 2];
    switch (name) {
      case 'FeatureType': {
        const label = text.trim();
        if (featureTypeId && label.startsWith(DC_PREFIX)) featureTypes.set(featureTypeId, label.slice(DC_PREFIX.length).trim());
        featureTypeId = null;
        break;
      }
      case 'Year':
      case 'Month':
      case 'Day':
        if (parent === 'DateOfIssue') issue[name] = text.trim();
        break;
      case 'DateOfIssue':
        if (issue.Year && issue.Month && issue.Day) {
          published = `${issue.Year}-${issue.Month.padStart(2, '0')}-${issue.Day.padStart(2, '0')}`;
        }
        break;
      case 'NamePartValue':
        // Only the alias's first DocumentedName (others are the same name in other scripts).
        if (aliasParts && documentedNames === 1 && text.trim()) aliasParts.push(text.trim());
        break;
      case 'Alias': {
        const full = aliasParts?.join(' ') ?? '';
        if (full) {
          if (aliasPrimary && !primaryName) primaryName = full;
          firstName ??= full;
        }
        aliasParts = null;
        break;
      }
      case 'VersionDetail':
        if (featureCurrency && text.trim()) pending.push({ currency: featureCurrency, address: text.trim() });
        break;
      case 'Feature':
        featureCurrency = null;
        break;
      case 'DistinctParty': {
        parties++;
        const partyName = primaryName ?? firstName ?? `SDN party ${partyRef ?? '?'}`;
        for (const p of pending) addresses.push({ ...p, partyRef: partyRef ?? '', partyName });
        pending = [];
        partyRef = null;
        break;
      }
    }
    path.pop();
    text = '';
  });

  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of chunks) {
      parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
      if (error) break;
    }
    if (!error) {
      const rest = decoder.decode();
      if (rest) parser.write(rest);
      parser.close();
    }
  } catch (e) {
    error ??= e instanceof Error ? e : new Error(String(e));
  }
  if (error) throw error instanceof SdnFormatError ? error : new SdnFormatError((error as Error).message, { cause: error });
  if (featureTypes.size === 0) throw new SdnFormatError('no "Digital Currency Address" FeatureType in ReferenceValueSets');
  if (!sawParties || parties === 0) throw new SdnFormatError('no DistinctParty');
  return { published, featureTypes, addresses, parties };
}

export type ImportCounts = {
  source: string;
  published: string | null;
  parties: number;
  /** Rows stored. */
  addresses: number;
  /** Addresses stored per Kassa network. */
  perNetwork: Partial<Record<KassaNetwork, number>>;
  /** Addresses listed under SDN codes that are no Kassa network, per code. */
  skipped: Record<string, number>;
};

/** Open a file path or an http(s) URL as a stream of chunks; a URL is streamed, not buffered. */
export async function openSource(source: string, options: { timeoutMs?: number } = {}): Promise<AsyncIterable<Uint8Array | string>> {
  if (/^https?:\/\//i.test(source)) {
    const response = await fetch(source, { signal: AbortSignal.timeout(options.timeoutMs ?? 600_000) });
    if (!response.ok || !response.body) throw new SdnFormatError(`GET ${source}: HTTP ${response.status}`);
    return response.body as unknown as AsyncIterable<Uint8Array>;
  }
  return createReadStream(source, { highWaterMark: 256 * 1024 });
}

/** Map, canonicalise and de-duplicate parsed entries (pure). */
export function toRows(parsed: SdnParseResult): { rows: SdnRow[]; perNetwork: Partial<Record<KassaNetwork, number>>; skipped: Record<string, number> } {
  const seen = new Set<string>();
  const rows: SdnRow[] = [];
  const perNetwork: Partial<Record<KassaNetwork, number>> = {};
  const skipped: Record<string, number> = {};
  for (const a of parsed.addresses) {
    const network = networkOfSdnEntry(a.currency, a.address);
    if (!network) {
      skipped[a.currency] = (skipped[a.currency] ?? 0) + 1;
      continue;
    }
    const address = canonicalAddress(network, a.address);
    const key = `${network}\u0000${address}\u0000${a.partyRef}\u0000${a.currency}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push({ network, address, listed_address: a.address, sdn_currency: a.currency, party_name: a.partyName, party_ref: a.partyRef });
    perNetwork[network] = (perNetwork[network] ?? 0) + 1;
  }
  return { rows, perNetwork, skipped };
}

export type SdnRow = {
  network: KassaNetwork;
  address: string;
  listed_address: string;
  sdn_currency: string;
  party_name: string;
  party_ref: string;
};

/**
 * Import `source` (file path or http(s) URL) as the `ofac` list, replacing the previous one
 * atomically; returns what was stored. Throws SdnFormatError (nothing changed) on a bad file.
 */
export async function importSdn(sql: Sql, source: string, options: { now?: () => Date; timeoutMs?: number } = {}): Promise<ImportCounts> {
  const parsed = await parseSdnAdvanced(await openSource(source, options));
  const { rows, perNetwork, skipped } = toRows(parsed);
  const importedAt = (options.now ?? (() => new Date()))();
  await sql.begin(async (tx) => {
    await tx`delete from sanctioned_addresses where list = ${OFAC_LIST}`;
    // Batches keep each JSON parameter small; the list holds a few thousand addresses.
    for (let i = 0; i < rows.length; i += 2000) {
      await tx`
        insert into sanctioned_addresses (list, network, address, listed_address, sdn_currency, party_name, party_ref)
        select ${OFAC_LIST}, network, address, listed_address, sdn_currency, party_name, party_ref
        from jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + 2000))}::jsonb)
          as x(network text, address text, listed_address text, sdn_currency text, party_name text, party_ref text)`;
    }
    await tx`
      insert into sanctions_lists (list, imported_at, source, published, address_count, counts, skipped)
      values (${OFAC_LIST}, ${importedAt.toISOString()}::timestamptz, ${source}, ${parsed.published}, ${rows.length},
              ${JSON.stringify(perNetwork)}::jsonb, ${JSON.stringify(skipped)}::jsonb)
      on conflict (list) do update set imported_at = excluded.imported_at, source = excluded.source,
        published = excluded.published, address_count = excluded.address_count, counts = excluded.counts,
        skipped = excluded.skipped`;
  });
  return { source, published: parsed.published, parties: parsed.parties, addresses: rows.length, perNetwork, skipped };
}
