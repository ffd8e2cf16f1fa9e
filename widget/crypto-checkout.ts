/**
 * `<crypto-checkout payment-url="…">`: the checkout element. This first
 * version registers the element and links to the payment; the full checkout
 * (picker, address, QR, live status) replaces it.
 */
import { LitElement, css, html } from 'lit';
import { customElement, property } from 'lit/decorators.js';

@customElement('crypto-checkout')
export class CryptoCheckout extends LitElement {
  static override styles = css`
    :host { display: block; font: 16px/1.5 system-ui, sans-serif; color: #1a1a1a; padding: 1rem; }
  `;

  /** The payment's checkout URL (`paymentUrl`). */
  @property({ attribute: 'payment-url' }) paymentUrl = '';

  override render() {
    return html`<p role="status">Checkout for <a href=${this.paymentUrl}>${this.paymentUrl}</a> is loading…</p>`;
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'crypto-checkout': CryptoCheckout;
  }
}
