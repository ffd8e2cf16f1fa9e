/**
 * The widget's entry module (built by Vite into /widget/crypto-checkout.js):
 * registers `<crypto-checkout>` once — a page that loads the script twice,
 * or from two versions, keeps the first definition instead of throwing.
 */
import { CryptoCheckout } from './crypto-checkout.component.js';

export { CryptoCheckout };
export type { CheckoutCompleteDetail, CheckoutCompleteEvent, CheckoutStatusDetail, CheckoutStatusEvent } from './events.js';

if (!customElements.get('crypto-checkout')) customElements.define('crypto-checkout', CryptoCheckout);

declare global {
  interface HTMLElementTagNameMap {
    'crypto-checkout': CryptoCheckout;
  }
}
