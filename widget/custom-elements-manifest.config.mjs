/**
 * Settings of @custom-elements-manifest/analyzer for `npm run build:manifest`:
 * documents <crypto-checkout> (attributes, properties, events, CSS parts and
 * custom properties, from the JSDoc of crypto-checkout.component.ts) in
 * widget/custom-elements.json, for editors and documentation tools.
 */
export default {
  globs: ['widget/crypto-checkout.component.ts', 'widget/crypto-checkout.ts', 'widget/events.ts'],
  outdir: 'widget',
  litelement: true,
  // Leave package.json alone (the analyzer would add a "customElements" field).
  packagejson: false,
};
