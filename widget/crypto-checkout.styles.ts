/**
 * Styles of `<crypto-checkout>`. Every colour, the fonts and the radius come
 * from `--kassa-*` custom properties whose defaults meet WCAG AA contrast;
 * tints are derived with color-mix(), so a theme sets a handful of colours.
 * Layout follows the element's own width (container queries), from a
 * 320 px iframe to a desktop page. The Vite build collapses the whitespace
 * of this template.
 */
import { css } from 'lit';

export const styles = css`
  :host {
    --p: var(--kassa-color-primary, #1d4ed8);
    --t: var(--kassa-color-text, #101828);
    --m: var(--kassa-color-muted, #475467);
    --bg: var(--kassa-color-background, #fff);
    --s: var(--kassa-color-surface, #f2f4f7);
    --b: var(--kassa-color-border, #d0d5dd);
    --r: var(--kassa-radius, 12px);
    display: block;
    container-type: inline-size;
    /* An explicit width: the containment above leaves the element no width of its own, so in a
       shrink-to-fit box (a <dialog>, a centred flex column, an inline-block, beside an order summary)
       it collapsed to 0. The card's 440 px at most, never wider than the viewport or (in normal flow)
       its container, centred as the card was; a page's own rule for the tag overrides these. */
    width: min(440px, 100vw);
    max-width: 100%;
    margin-inline: auto;
    color: var(--t);
    font: 15px/1.5 var(--kassa-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
  }
  :host([hidden]) { display: none; }
  :host([full-page]) { width: auto; max-width: none; min-height: 100vh; background: var(--s); padding: 48px 16px; }
  * { box-sizing: border-box; }
  .card {
    container-type: inline-size; max-width: 440px; margin: auto; padding: 24px; background: var(--bg);
    border: 1px solid var(--b); border-radius: calc(var(--r) + 4px); box-shadow: 0 12px 32px -8px #10182814;
  }
  @container (max-width: 439px) {
    .card { padding: 10px 16px 20px; }
    :host([full-page]) .card { border: 0; border-radius: 0; box-shadow: none; }
  }
  @media (max-width: 479px) { :host([full-page]) { padding: 0; background: var(--bg); } }
  h2, h3, p, figure, ul, ol, fieldset, legend { margin: 0; padding: 0; border: 0; min-width: 0; }
  h2, h3 { outline: none; font-weight: 700; }
  :focus-visible, .opt input:focus-visible + span { outline: 2px solid var(--p); outline-offset: 2px; }
  .sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  .muted, .label, .name, .amt, .note { color: var(--m); }
  .small, .label, .name, .amt, .note, .steps { font-size: 13px; }
  .center { text-align: center; }
  .mono { font-family: var(--kassa-font-family-mono, ui-monospace, Menlo, Consolas, monospace); }
  .stack > * + * { margin-top: 20px; }
  .success { --c: var(--kassa-color-success, #067647); }
  .progress { --c: var(--p); }
  .warning { --c: var(--kassa-color-warning, #b54708); }
  .danger { --c: var(--kassa-color-danger, #b42318); }

  header { display: flex; align-items: center; justify-content: space-between; gap: 12px; }
  .test { display: flex; justify-content: center; }
  .tag.test { white-space: normal; text-align: center; }
  header h2 { font-size: 17px; font-weight: 600; }
  .timer, .tag { display: inline-flex; align-items: center; gap: 6px; border-radius: 99px; font-weight: 600; white-space: nowrap; }
  .timer { padding: 4px 10px; background: var(--s); font-size: 14px; font-variant-numeric: tabular-nums; }
  .timer.low { color: var(--kassa-color-danger, #b42318); }
  .i { width: 16px; height: 16px; flex: none; fill: none; stroke: currentColor; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; }

  .label { display: block; font-weight: 500; margin-bottom: 4px; }
  .amount { display: flex; align-items: center; gap: 8px; }
  .big { font-size: 28px; line-height: 1.2; font-weight: 700; font-variant-numeric: tabular-nums; overflow-wrap: anywhere; }
  .due .muted { margin-top: 4px; }

  button { font: inherit; color: inherit; cursor: pointer; }
  .btn, .copy, .icon-btn { display: flex; align-items: center; justify-content: center; gap: 6px; border: 1px solid var(--b); background: var(--bg); font-weight: 600; }
  .copy, .icon-btn { flex: none; min-height: 36px; padding: 6px 12px; border-radius: calc(var(--r) - 4px); font-size: 14px; }
  .icon-btn { width: 36px; padding: 0; }
  .btn { width: 100%; min-height: 48px; padding: 12px 16px; border-radius: var(--r); text-decoration: none; color: var(--t); }
  .btn.primary { background: var(--p); border-color: var(--p); color: var(--kassa-color-on-primary, #fff); }
  .btn:disabled { opacity: 0.45; cursor: not-allowed; }
  .copy:hover, .icon-btn:hover, .btn:not(.primary):hover, .opt span:hover { background: var(--s); }
  .copied { color: var(--kassa-color-success, #067647); }

  .pay { display: grid; gap: 16px; }
  .qr { display: grid; justify-items: center; gap: 8px; }
  .qr svg { width: 208px; height: 208px; border: 1px solid var(--b); border-radius: var(--r); }
  .qr a { color: var(--p); font-weight: 600; font-size: 14px; }
  .field { display: flex; align-items: center; gap: 8px; padding: 10px 10px 10px 12px; border: 1px solid var(--b); border-radius: var(--r); background: var(--s); }
  .value { flex: 1; min-width: 0; overflow-wrap: anywhere; font-size: 14px; }
  .note { display: flex; gap: 8px; }
  .note .i { margin-top: 2px; }
  .note.warning { color: var(--c); font-weight: 500; }

  .status { display: flex; align-items: center; gap: 10px; padding: 12px 14px; border-radius: var(--r); background: var(--s); font-weight: 500; }
  .status:not(.info, .progress) { color: var(--c); }
  .dot { width: 8px; height: 8px; flex: none; border-radius: 50%; background: var(--c, var(--p)); }
  .info .dot, .progress .dot { animation: pulse 1.6s infinite; }
  @keyframes pulse { 50% { opacity: 0.25; } }
  @media (prefers-reduced-motion: reduce) { .dot { animation: none !important; } }

  .steps { display: flex; list-style: none; color: var(--m); }
  .steps li { flex: 1; position: relative; padding-top: 14px; text-align: center; }
  .steps li::before, .steps li::after { content: ''; position: absolute; background: var(--b); }
  .steps li::before { top: 4px; inset-inline: 0; height: 2px; }
  .steps li::after { top: 0; left: calc(50% - 5px); width: 10px; height: 10px; border-radius: 50%; border: 2px solid var(--b); background: var(--bg); }
  .steps .done, .steps .current { color: var(--t); font-weight: 600; }
  .steps .done::before, .steps .done::after { background: var(--kassa-color-success, #067647); border-color: var(--kassa-color-success, #067647); }
  .steps .current::after { border-color: var(--p); }

  .result { display: grid; justify-items: center; gap: 8px; padding: 8px 0; text-align: center; }
  .badge { display: grid; place-items: center; width: 56px; height: 56px; border-radius: 50%; color: var(--c); background: color-mix(in srgb, var(--c) 14%, transparent); }
  .badge .i { width: 28px; height: 28px; stroke-width: 2.5; }
  .result h3 { font-size: 20px; }
  .result p { max-width: 34ch; }

  legend { font-weight: 600; margin-bottom: 10px; }
  .opts { display: grid; gap: 8px; }
  @container (min-width: 360px) {
    .cols { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
    .cols .amt { flex-basis: 100%; margin: 0; text-align: start; }
  }
  .opt { position: relative; }
  .opt input { position: absolute; opacity: 0; }
  .opt span.c {
    display: flex; flex-wrap: wrap; align-items: baseline; column-gap: 8px; min-height: 48px; padding: 11px 12px;
    border: 1px solid var(--b); border-radius: var(--r); cursor: pointer;
  }
  .opt input:checked + span { border-color: var(--p); box-shadow: 0 0 0 1px var(--p); }
  .amt { margin-inline-start: auto; overflow-wrap: anywhere; text-align: end; font-variant-numeric: tabular-nums; }
  .nets .amt { color: var(--t); font-weight: 600; }
  .err { color: var(--kassa-color-danger, #b42318); font-weight: 500; }

  .deposits h3 { font-size: 14px; font-weight: 600; margin-bottom: 8px; }
  .deposits ul { list-style: none; border: 1px solid var(--b); border-radius: var(--r); }
  .deposits li { display: grid; gap: 2px; padding: 10px 12px; }
  .deposits li + li { border-top: 1px solid var(--b); }
  .row { display: flex; justify-content: space-between; gap: 8px; font-weight: 600; }
  .tag { padding: 2px 8px; font-size: 12px; color: var(--c); background: color-mix(in srgb, var(--c) 10%, transparent); }

  .skeleton { display: grid; gap: 12px; }
  .skeleton i { height: 16px; border-radius: 6px; background: var(--s); }
  .skeleton i + i { height: 36px; width: 70%; }
  .skeleton i + i + i { height: 180px; width: 180px; justify-self: center; }

  .short { display: none; }
  /* A 320 px phone: currencies in three columns of codes, networks in one row of short names ("TRC-20": what
     is seen is what a screen reader says), amounts once chosen, so the choice and the button fit the first screen. */
  @container (max-width: 359px) {
    .cols { grid-template-columns: repeat(3, minmax(0, 1fr)); }
    .nets { grid-auto-flow: column; grid-auto-columns: minmax(0, 1fr); }
    .opts { gap: 6px; }
    .cols .name, .opts .amt, .nets .full { display: none; }
    .nets .short { display: inline; }
    .opt span.c { justify-content: center; min-height: 40px; padding: 8px 2px; white-space: nowrap; }
    .stack > * + * { margin-top: 12px; }
    .big { font-size: 24px; }
    legend { margin-bottom: 4px; }
  }
`;
