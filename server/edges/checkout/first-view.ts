/**
 * The hosted page's first view, rendered on the server by the widget's own
 * component (`@lit-labs/ssr`) into a declarative shadow root: the browser
 * paints the amount, address and QR code while it parses the page, before
 * the widget module has arrived or run (bench scenario 4, "address
 * visible"), and a customer whose browser runs no script still sees where
 * to pay. Once the module runs, the element renders the same view over it
 * (CryptoCheckout.shouldUpdate); the widget carries no hydration code,
 * which would cost a tenth of its size budget.
 *
 * `@lit-labs/ssr` (and the parser it brings) is imported on the first page,
 * not at start: a process that serves no checkout does not hold it.
 */
import type { CheckoutView } from '../../modules/payments/index.js';

type Renderer = (view: CheckoutView, paymentUrl: string, inner: string) => Promise<string>;

let renderer: Promise<Renderer> | null = null;

const LIT_MARKERS = /<!--\/?lit-(?:part|node)\b[^>]*-->/g;

async function load(): Promise<Renderer> {
  const [{ render }, { collectResultSync }, { html }, { unsafeHTML }, { CryptoCheckout }, { loadMessages, resolveLocale }] = await Promise.all([
    import('@lit-labs/ssr'),
    import('@lit-labs/ssr/lib/render-result.js'),
    import('lit'),
    import('lit/directives/unsafe-html.js'),
    import('../../../widget/crypto-checkout.component.js'),
    import('../../../widget/localize.js'),
  ]);
  // The server's own registry (the DOM shim's), where only this element lives.
  if (!customElements.get('crypto-checkout')) customElements.define('crypto-checkout', CryptoCheckout);
  return async (view, paymentUrl, inner) => {
    // The language the widget will speak, with the strings it would load: rendered whole, never the skeleton.
    const { language } = resolveLocale(null, view.language);
    const messages = { language, strings: await loadMessages(language) };
    // `view` and `messages` are the element's internal state: set here as the module sets them from the inlined view.
    const markup = collectResultSync(
      render(html`<crypto-checkout .view=${view} .messages=${messages} payment-url=${paymentUrl} full-page>${unsafeHTML(inner)}</crypto-checkout>`),
    );
    // Lit's comment markers serve hydration only, which the widget does not do. Every text and attribute
    // in the markup is escaped (and `<` in the inlined JSON too), so `<!--` is only ever Lit's own.
    return markup.replace(LIT_MARKERS, '').replace(/^<crypto-checkout\s+/, '<crypto-checkout ');
  };
}

/**
 * `<crypto-checkout>` with its first view in a declarative shadow root and
 * `inner` (markup of the page's own, here the inlined view) as its light DOM.
 */
export async function renderCheckoutElement(view: CheckoutView, paymentUrl: string, inner: string): Promise<string> {
  renderer ??= load().catch((error: unknown) => {
    renderer = null;
    throw error;
  });
  return (await renderer)(view, paymentUrl, inner);
}
