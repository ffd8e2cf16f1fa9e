/**
 * Screening against the imported OFAC list (ofac-import.ts): an address is sanctioned when its
 * canonical form is listed on its network (EVM addresses on either EVM network, case-insensitive).
 * Before any import the answer is SanctionsListMissing, distinct from "not listed".
 */
import type postgres from 'postgres';
import { canonicalAddress, isKassaNetwork, matchNetworks } from './networks.rules.js';
import { OFAC_LIST } from './ofac-import.js';
import { NOT_LISTED, SanctionsListMissing, ScreeningUnavailable, sanctionedAssessment, type RiskAssessment, type SanctionsScreener } from './result.js';

type Sql = postgres.Sql;

export type OfacListStatus =
  | { imported: false }
  | { imported: true; importedAt: string; source: string; published: string | null; addresses: number; perNetwork: Record<string, number> };

export class OfacScreening implements SanctionsScreener {
  readonly name = 'ofac';
  constructor(private readonly sql: Sql) {}

  async screen(network: string, address: string): Promise<RiskAssessment> {
    if (!isKassaNetwork(network)) throw new ScreeningUnavailable(this.name, 'unsupported_network', `unknown network ${network}`);
    const canonical = canonicalAddress(network, address);
    const rows = await this.sql<{ party_name: string | null; imported: boolean }[]>`
      select exists (select 1 from sanctions_lists where list = ${OFAC_LIST}) as imported,
             (select string_agg(distinct party_name, '; ' order by party_name)
                from sanctioned_addresses
               where list = ${OFAC_LIST} and address = ${canonical} and network = any(string_to_array(${matchNetworks(network).join(',')}, ','))) as party_name`;
    const row = rows[0]!;
    if (!row.imported) throw new SanctionsListMissing(this.name);
    return row.party_name ? sanctionedAssessment(row.party_name) : NOT_LISTED;
  }

  /** For `/ready` (`sanctions: "missing"` when not imported) and the CLI. */
  async status(): Promise<OfacListStatus> {
    const rows = await this.sql<
      { imported_at: string; source: string; published: string | null; address_count: number; counts: string }[]
    >`
      select to_char(imported_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as imported_at, source, published,
             address_count, counts::text as counts
      from sanctions_lists where list = ${OFAC_LIST}`;
    const r = rows[0];
    if (!r) return { imported: false };
    // jsonb read as text: the connection's json parser may be replaced (drizzle does).
    return { imported: true, importedAt: r.imported_at, source: r.source, published: r.published, addresses: r.address_count, perNetwork: JSON.parse(r.counts) as Record<string, number> };
  }
}
