/**
 * The end-user checkout: one custom element that loads a payment by its
 * checkout URL, lets the customer pick a currency when the payment is NEW,
 * shows the amount, address, destination tag and QR code, follows the
 * payment live over server-sent events and, once a deposit is received,
 * sends the customer back to the shop. What to show is decided by the pure
 * functions of checkout-state.ts; this class wires them to the DOM.
 */
import { LitElement, html, isServer, nothing, type PropertyValues, type TemplateResult } from 'lit';
import { createCheckoutClient, isNotFound, parsePaymentUrl, type CheckoutClient } from './api.js';
import {
  CURRENCY_NAMES, amountLabel, backUrl, depositTone, dueAmount, groupOptions, headlineKey, isComplete, networkLabel, networkShort, owesMore, phaseOf, redirectPlan,
  secondsLeft, settledIds, showsCountdown, showsPay, sinceOpened, stepsOf, tagKeys, targetOf, toneOf,
  type CheckoutOption, type CheckoutView, type Phase,
} from './checkout-state.js';
import { styles } from './crypto-checkout.styles.js';
import { completeDetail, emit, statusDetail } from './events.js';
import { formatCountdown, formatCrypto, formatDateTime, formatFiat, shorten } from './format.js';
import { direction, en, loadMessages, resolveLocale, translate, type Language, type MessageKey, type Messages } from './localize.js';
import { qrPath, type QrPath } from './qr.js';

const icon = (d: string) => html`<svg class="i" viewBox="0 0 24 24" aria-hidden="true"><path d=${d}></path></svg>`;
const COPY = 'M9 9h11v11H9zM5 15H4V4h11v1';
const CHECK = 'M20 6 9 17l-5-5';
const CLOCK = 'M12 7v5l3 2M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z';
const ALERT = 'M12 9v4m0 4h.01M10.3 3.9 1.8 18a2 2 0 0 0 1.7 3h17a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0z';
const INFO = 'M12 16v-4m0-4h.01M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0z';
const CROSS = 'M18 6 6 18M6 6l12 12';

type Copyable = 'amount' | 'address' | 'tag';

/** A sentence whose `{placeholders}` are isolated runs (<bdi>): an amount stays whole inside right-to-left text. */
const rich = (m: Messages, key: MessageKey, params: Record<string, string>) =>
  m[key].split(/\{(\w+)\}/).map((part, i) => (i % 2 ? html`<bdi>${params[part] ?? part}</bdi>` : part));

/**
 * A crypto payment checkout, driven by the payment's checkout URL.
 *
 * ```html
 * <script type="module" src="https://pay.example/widget/crypto-checkout.js"></script>
 * <crypto-checkout payment-url="https://pay.example/checkout/…"></crypto-checkout>
 * ```
 *
 * A `<script type="application/json">` child holding the checkout view (the
 * hosted page inlines it) is shown at once, before any request.
 *
 * @summary Pay a Kassa payment request in crypto, with live status.
 *
 * @event {CheckoutStatusEvent} checkout-status - The payment's status changed (also fired for the first status seen). `detail`: `{ status, previousStatus, paid, remaining, currency }`.
 * @event {CheckoutCompleteEvent} checkout-complete - A deposit has been received; fired once. `detail`: `{ status, paid, currency, redirectUrl }`. Cancelable: `preventDefault()` stops the automatic redirect.
 *
 * @csspart base - The card holding everything.
 * @csspart test-mode - The "test mode" mark of a sandbox checkout (never shown in live mode).
 * @csspart header - Title, the merchant's name and countdown.
 * @csspart merchant - The merchant's name.
 * @csspart countdown - The time left until the payment request expires.
 * @csspart amount - The amount due and its value in the display currency.
 * @csspart fee - The one line explaining the customer's share of the service fee.
 * @csspart picker - The currency and network choice of a NEW payment.
 * @csspart qr - The QR code and the "open in wallet" link.
 * @csspart address - The deposit address and destination tag fields.
 * @csspart copy-button - Each copy button.
 * @csspart status - The one-line payment status.
 * @csspart result - The outcome panel (received, expired, blocked, error).
 * @csspart deposits - The list of the customer's transfers and refunds.
 * @csspart button - The primary action button.
 * @csspart back-button - The "back to the shop" link.
 *
 * @cssproperty [--kassa-color-primary=#1d4ed8] - Buttons, focus ring, selection.
 * @cssproperty [--kassa-color-on-primary=#fff] - Text on primary buttons.
 * @cssproperty [--kassa-color-text=#101828] - Main text.
 * @cssproperty [--kassa-color-muted=#475467] - Secondary text.
 * @cssproperty [--kassa-color-background=#fff] - The card.
 * @cssproperty [--kassa-color-surface=#f2f4f7] - Fields, status row, full-page backdrop.
 * @cssproperty [--kassa-color-border=#d0d5dd] - Borders.
 * @cssproperty [--kassa-color-success=#067647] - Received.
 * @cssproperty [--kassa-color-warning=#b54708] - Underpaid, expired, warnings.
 * @cssproperty [--kassa-color-danger=#b42318] - Blocked, failed, errors.
 * @cssproperty [--kassa-font-family=system-ui] - Text font.
 * @cssproperty [--kassa-font-family-mono=ui-monospace] - Addresses and transaction ids.
 * @cssproperty [--kassa-radius=12px] - Corner radius of fields and buttons.
 */
export class CryptoCheckout extends LitElement {
  static override styles = styles;

  /**
   * Reactive properties declared as data, not with Lit's decorators: the decorators and the
   * compiler's `__decorate` helper cost ~0.4 KB gzip of the widget. `attribute: false` is what
   * `state: true` implies; it is written out for the custom-elements manifest's analyzer.
   */
  static override properties = {
    paymentUrl: { attribute: 'payment-url' },
    locale: {},
    fullPage: { type: Boolean, reflect: true, attribute: 'full-page' },
    redirectDelay: { type: Number, attribute: 'redirect-delay' },
    view: { state: true, attribute: false },
    problem: { state: true, attribute: false },
    offline: { state: true, attribute: false },
    messages: { state: true, attribute: false },
    now: { state: true, attribute: false },
    pick: { state: true, attribute: false },
    busy: { state: true, attribute: false },
    chooseFailed: { state: true, attribute: false },
    copied: { state: true, attribute: false },
    redirectAt: { state: true, attribute: false },
  };

  /** The payment's checkout URL (`paymentUrl` of the created payment). The API is `…/checkout/api` beside it. */
  paymentUrl = '';

  /** Overrides the payment's language: `en-US`, `en_US` or `en`; an unsupported language means English. */
  locale = '';

  /** Fill the viewport, as on the hosted checkout page. */
  fullPage = false;

  /** Seconds of visible countdown before the redirect to the shop once the payment is complete. */
  redirectDelay = 5;

  private view: CheckoutView | null = null;
  private problem: 'invalid' | 'unavailable' | null = null;
  private offline = false;
  private messages: { language: Language; strings: Messages } | null = null;
  private now = Date.now();
  private pick: { currency?: string; network?: string } = {};
  private busy = false;
  private chooseFailed = false;
  private copied: Copyable | null = null;
  private redirectAt: number | null = null;

  #client: CheckoutClient | null = null;
  #token = '';
  #subscription: { unsubscribe(): void } | null = null;
  #generation = 0;
  #lastStatus: string | null = null;
  /** A REUSABLE payment's transfers settled before this page showed it (`sinceOpened`). */
  #baseline: Set<string> | null = null;
  /** The server's clock less this device's, from the last view (ms): the countdown runs on the server's time. */
  #clockOffset = 0;
  #completed = false;
  #redirected = false;
  #wantedLanguage: Language | null = null;
  #timers: Partial<Record<'tick' | 'copy' | 'retry', ReturnType<typeof setTimeout>>> = {};
  #qr: { uri: string; path: QrPath } | null = null;
  #focusBefore: Element | null = null;
  #prerendered = false;

  override connectedCallback(): void {
    super.connectedCallback();
    // Moved in the page (into a modal, say): follow again, keeping what was shown and announced, so
    // checkout-status and checkout-complete do not fire a second time and a redirect keeps its time.
    if (this.hasUpdated) {
      if (this.#client && this.view) this.#follow();
      else this.#connect();
    }
    this.#timers.tick = setInterval(() => this.#tick(), 1000);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#disconnect();
    for (const timer of Object.values(this.#timers)) clearTimeout(timer);
    this.#timers = {};
  }

  /**
   * The hosted page renders the first view on the server, into a declarative shadow root, so the
   * address shows before this module runs (bench scenario 4). That view stays until a render with the
   * strings replaces it (a language chunk still loading would otherwise blank it to the skeleton).
   */
  protected override createRenderRoot(): HTMLElement | DocumentFragment {
    this.#prerendered = !!this.shadowRoot;
    return super.createRenderRoot();
  }

  protected override shouldUpdate(changed: PropertyValues<this>): boolean {
    if (this.#prerendered) {
      if (!this.messages) {
        // No render yet, but what an update starts must start: the connection and the strings.
        this.willUpdate(changed);
        return false;
      }
      this.#prerendered = false;
      this.renderRoot.replaceChildren();
      this.renderOptions.renderBefore = null;
    }
    return true;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Rendered on the server (the hosted page's first view), the element only renders what it was given.
    if (isServer) return;
    if (changed.has('paymentUrl')) this.#connect();
    const { language } = resolveLocale(this.locale, this.view?.language);
    if (language !== this.#wantedLanguage) {
      this.#wantedLanguage = language;
      void loadMessages(language).then((strings) => {
        if (this.#wantedLanguage === language) this.messages = { language, strings };
      });
    }
    this.#focusBefore = this.shadowRoot?.activeElement ?? null;
  }

  protected override updated(): void {
    // The focused control went away with the phase (the picker after choosing, say): focus the new
    // heading — the outcome's when there is one, else the card's title.
    if (this.#focusBefore && !this.#focusBefore.isConnected) [...this.renderRoot.querySelectorAll<HTMLElement>('[data-focus]')].pop()?.focus();
    this.#focusBefore = null;
  }

  /** (Re)start loading and following the payment named by `paymentUrl`. */
  #connect(): void {
    this.#disconnect();
    const generation = ++this.#generation;
    Object.assign(this, { view: null, problem: null, offline: false, redirectAt: null, pick: {} });
    this.#lastStatus = null;
    this.#baseline = null;
    this.#completed = this.#redirected = false;
    const target = parsePaymentUrl(this.paymentUrl, document.baseURI);
    if (!target) {
      this.problem = 'invalid';
      return;
    }
    this.#client = createCheckoutClient(target.apiUrl);
    this.#token = target.token;
    const inlined = this.#takeInlinedView();
    if (inlined) {
      this.#apply(inlined);
      // Paint the inlined view first, then open the live connection (its first message is the current
      // view again, so nothing between the page and the subscription is missed): opening it before the
      // first render delayed the address by the subscription's set-up (bench scenario 4).
      void this.updateComplete.then(() => requestAnimationFrame(() => generation === this.#generation && this.#follow()));
      return;
    }
    // Else the first view by query (quick, and a clear error for a bad token); then every change by subscription.
    this.#client.get.query({ token: this.#token }).then(
      (view) => generation === this.#generation && !this.#lastStatus && this.#apply(view),
      (error: unknown) => generation === this.#generation && this.#fail(error),
    );
    this.#follow();
  }

  /** The view inlined as a JSON child by the hosted page, read once (a later connect asks the server). */
  #takeInlinedView(): CheckoutView | null {
    const data = this.querySelector(':scope > script[type="application/json"]');
    if (!data) return null;
    data.remove();
    try {
      return JSON.parse(data.textContent ?? '') as CheckoutView;
    } catch {
      return null;
    }
  }

  #follow(): void {
    const generation = this.#generation;
    this.#subscription?.unsubscribe();
    this.#subscription = this.#client!.updates.subscribe(
      { token: this.#token },
      {
        onData: ({ data }) => {
          if (generation !== this.#generation) return;
          this.offline = false;
          this.#apply(data);
        },
        onError: (error) => generation === this.#generation && this.#fail(error),
        onConnectionStateChange: (s) => (this.offline = s.state === 'connecting' && !!s.error),
      },
    );
  }

  #disconnect(): void {
    this.#subscription?.unsubscribe();
    this.#subscription = null;
    clearTimeout(this.#timers.retry);
  }

  #fail(error: unknown): void {
    if (isNotFound(error)) {
      this.#disconnect();
      this.problem = 'invalid';
    } else if (!this.view) {
      this.problem = 'unavailable';
    } else {
      // The stream ended with an error (rate limit, server restart): keep the view, follow again shortly.
      this.offline = true;
      clearTimeout(this.#timers.retry);
      this.#timers.retry = setTimeout(() => this.#follow(), 5000);
    }
  }

  /** Take a new view: fire the events it implies and start the redirect countdown when it completes the payment. */
  #apply(received: CheckoutView): void {
    this.#baseline ??= settledIds(received);
    const view = sinceOpened(received, this.#baseline);
    // A device clock set wrong must not end (or stretch) the time left to pay.
    if (typeof view.serverTime === 'number') this.#clockOffset = view.serverTime * 1000 - Date.now();
    this.view = view;
    this.problem = null;
    this.now = Date.now();
    if (view.status !== this.#lastStatus) {
      const previous = this.#lastStatus;
      this.#lastStatus = view.status;
      emit(this, 'checkout-status', statusDetail(view, previous));
    }
    if (isComplete(view) && !this.#completed) {
      this.#completed = true;
      const plan = redirectPlan(view);
      const proceed = emit(this, 'checkout-complete', completeDetail(view, plan?.url ?? null));
      if (plan && proceed) this.redirectAt = this.now + Math.max(0, this.redirectDelay) * 1000;
    }
  }

  #tick(): void {
    const view = this.view;
    if (!view || this.problem) return;
    if (this.redirectAt !== null && !this.#redirected) {
      this.now = Date.now();
      if (this.now >= this.redirectAt) this.#redirect();
    } else if (showsCountdown(view, phaseOf(view))) {
      this.now = Date.now();
    }
  }

  /** Navigate to the shop in the browsing context the payment asks for (PARENT: `_top`, SELF: `_self`). */
  #redirect(): void {
    const plan = this.view && redirectPlan(this.view);
    this.#redirected = true;
    this.requestUpdate();
    if (!plan) return;
    try {
      (plan.target === '_top' ? window.top! : window).location.href = plan.url;
    } catch {
      // A cross-origin frame the customer never touched may not navigate the top window: the back button remains.
    }
  }

  async #choose(option: CheckoutOption): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    this.chooseFailed = false;
    try {
      this.#apply(await this.#client!.choose.mutate({ token: this.#token, depositCurrency: option.currency, network: option.network }));
    } catch {
      this.chooseFailed = true;
      this.#client!.get.query({ token: this.#token }).then((view) => this.#apply(view), () => {});
    } finally {
      this.busy = false;
    }
  }

  async #copy(what: Copyable, text: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // Framed without `allow="clipboard-write"`: the older API still works on a click.
      const area = Object.assign(document.createElement('textarea'), { value: text, className: 'sr' });
      this.renderRoot.appendChild(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    this.copied = what;
    clearTimeout(this.#timers.copy);
    this.#timers.copy = setTimeout(() => (this.copied = null), 2000);
  }

  protected override render(): TemplateResult {
    const { language, locale } = resolveLocale(this.locale, this.view?.language);
    const strings = this.messages?.language === language ? this.messages.strings : null;
    const m = strings ?? en;
    const view = this.view;
    const phase = view && phaseOf(view);
    let body: TemplateResult;
    let live = '';
    let busy = false;
    if (this.problem) {
      body = this.#result('danger', ALERT, translate(m, this.problem === 'invalid' ? 'invalid' : 'loadError'), [], this.problem === 'unavailable'
        ? html`<button type="button" class="btn" @click=${() => this.#connect()}>${translate(m, 'retry')}</button>`
        : nothing);
      live = translate(m, this.problem === 'invalid' ? 'invalid' : 'loadError');
    } else if (!view || !phase || !strings) {
      body = html`<div class="skeleton" aria-hidden="true"><i></i><i></i><i></i></div>`;
      live = translate(m, 'loading');
      busy = true;
    } else {
      body = this.#renderView(view, phase, strings, locale);
      live = this.#headline(view, phase, strings, locale);
    }
    return html`<div part="base" class="card" lang=${language} dir=${direction(language)} aria-busy=${busy}>
      ${body}
      <div class="sr" role="status" aria-live="polite" aria-atomic="true">${live}</div>
      <div class="sr" aria-live="polite">${this.copied ? translate(m, 'copied') : ''}</div>
    </div>`;
  }

  #headline(view: CheckoutView, phase: Phase, m: Messages, locale: string): string {
    const cur = view.depositCurrency ?? '';
    return translate(m, headlineKey(view, phase), {
      paid: formatCrypto(locale, view.paid, cur),
      remaining: formatCrypto(locale, view.remaining ?? '0', cur),
    });
  }

  #renderView(view: CheckoutView, phase: Phase, m: Messages, locale: string): TemplateResult {
    const t = (key: MessageKey, params?: Record<string, string>) => translate(m, key, params);
    const cur = view.depositCurrency;
    const crypto = (amount: string) => formatCrypto(locale, amount, cur ?? '');
    const fiat = view.displayAmount && view.displayCurrency ? formatFiat(locale, view.displayAmount, view.displayCurrency) : null;
    const left = showsCountdown(view, phase) ? secondsLeft(view.expiresAt, this.now + this.#clockOffset) : null;
    const back = backUrl(view);
    const tone = toneOf(phase);
    // Part paid (confirmed or on its way), or a transfer rejected or failed: what is still due; else the whole amount.
    const due = dueAmount(view, phase);
    const more = owesMore(view, phase);
    const pay = showsPay(view, phase);

    const header = html`<header part="header">
      <div><h2 tabindex="-1" data-focus>${t('title')}</h2><p class="muted small" part="merchant">${view.merchantName}</p></div>
      ${left === null
        ? nothing
        : html`<span class="timer ${left < 300 ? 'low' : ''}" role="timer" part="countdown" aria-label=${t('timeLeft')}>${icon(CLOCK)}<span>${formatCountdown(locale, left)}</span></span>`}
    </header>`;

    // The customer's share of the service fee is part of the amount: said once, in one line, while they pay.
    const fee = view.customerFee && (phase === 'choose' || pay)
      ? html`<p class="muted small" part="fee">${rich(m, 'feeShare', { fee: (view.customerFee.currency === view.displayCurrency ? formatFiat : formatCrypto)(locale, view.customerFee.amount, view.customerFee.currency) })}</p>`
      : nothing;
    const amount =
      phase === 'choose'
        ? html`<section class="due" part="amount"><p class="label">${t('amountDue')}</p><div class="amount"><bdi class="big">${fiat}</bdi></div>${fee}</section>`
        : cur && due
          ? html`<section class="due" part="amount">
              <p class="label">${t(amountLabel(view, phase))}</p>
              <div class="amount">
                <bdi class="big">${crypto(due)}</bdi>
                ${pay
                  ? html`<button type="button" class="icon-btn ${this.copied === 'amount' ? 'copied' : ''}" part="copy-button" aria-label=${t('copyAmount')} title=${t('copyAmount')} @click=${() => this.#copy('amount', due)}>${icon(this.copied === 'amount' ? CHECK : COPY)}</button>`
                  : nothing}
              </div>
              <p class="muted">${[fiat && due === view.depositAmount ? `≈ ${fiat}` : '', view.network ? networkLabel(view.network, cur) : ''].filter(Boolean).join(' · ')}</p>
              ${due === view.depositAmount ? fee : nothing}
            </section>`
          : nothing;

    const status = html`<div class="status ${tone}" part="status"><span class="dot"></span><span>${rich(m, headlineKey(view, phase), {
      paid: crypto(view.paid),
      remaining: crypto(view.remaining ?? '0'),
    })}</span></div>`;
    const offline = this.offline ? html`<p class="note warning">${icon(ALERT)}<span>${t('reconnecting')}</span></p>` : nothing;
    const backLink = (primary: boolean) =>
      back
        ? html`<a class="btn ${primary ? 'primary' : ''}" part="back-button" href=${back} target=${targetOf(view)} @click=${() => (this.#redirected = true)}>${t('back')}</a>`
        : nothing;

    let main: unknown;
    switch (phase) {
      case 'choose':
        main = [amount, this.#renderPicker(view, m, locale), backLink(false)];
        break;
      case 'received': {
        const steps = this.#renderSteps(phase, m);
        const seconds = this.redirectAt !== null && !this.#redirected ? Math.max(0, Math.ceil((this.redirectAt - this.now) / 1000)) : null;
        main = [
          this.#result('success', CHECK, t('received'), [
            rich(m, 'receivedText', { amount: crypto(view.paid) }),
            view.status === 'OVERPAID' ? t('overpaid') : '',
          ]),
          steps,
          this.#renderDeposits(view, m, locale),
          seconds === null ? nothing : html`<p class="muted small center" part="redirect">${t('redirect', { s: String(seconds) })}</p>`,
          backLink(true),
        ];
        break;
      }
      case 'expired':
      case 'blocked':
        main = [
          this.#result(tone, phase === 'expired' ? CLOCK : CROSS, t(phase), [
            t(phase === 'expired' ? 'expiredText' : 'blockedText'),
            phase === 'expired' && Number(view.paid) > 0 ? rich(m, 'expiredPaid', { paid: crypto(view.paid) }) : '',
            // What to do next: a transfer sent anyway is handled by the shop, which needs its transaction id.
            phase === 'expired' ? rich(m, 'expiredNext', { merchant: view.merchantName }) : '',
          ]),
          this.#renderDeposits(view, m, locale),
          backLink(true),
        ];
        break;
      case 'confirming':
        // A transfer on its way that falls short: the rest is due now, to the same address.
        main = [amount, status, this.#renderSteps(phase, m), more ? this.#renderPay(view, phase, m, crypto(due ?? '0')) : nothing, this.#renderDeposits(view, m, locale), backLink(false)];
        break;
      default: {
        // pay, underpaid, unprocessable, failed: the customer can (still) pay.
        const explain = phase === 'unprocessable' || phase === 'failed'
          ? html`<p class="note">${icon(INFO)}<span>${rich(m, phase === 'failed' ? 'failedText' : 'unprocessableText', { amount: crypto(due ?? '0') })}</span></p>`
          : nothing;
        main = [amount, status, explain, this.#renderPay(view, phase, m, crypto(due ?? '0')), this.#renderDeposits(view, m, locale), backLink(false)];
      }
    }
    const test = view.testMode ? html`<p class="tag warning test" part="test-mode">${t('testMode')}</p>` : nothing;
    return html`<div class="stack">${test}${header}${offline}${main}</div>`;
  }

  #renderPicker(view: CheckoutView, m: Messages, locale: string): TemplateResult {
    const groups = groupOptions(view.options);
    const group = groups.find((g) => g.currency === this.pick.currency);
    const option = group && (group.options.length === 1 ? group.options[0] : group.options.find((o) => o.network === this.pick.network));
    const amountOf = (o: CheckoutOption) => html`<span class="amt"><bdi>${formatCrypto(locale, o.amount, o.currency)}</bdi></span>`;
    const radio = (name: string, checked: boolean, content: unknown, onChange: () => void) =>
      html`<label class="opt"><input type="radio" name=${name} .checked=${checked} @change=${onChange} /><span class="c">${content}</span></label>`;
    return html`<form class="stack" part="picker" @submit=${(e: Event) => (e.preventDefault(), option && this.#choose(option))}>
      <fieldset>
        <legend>${translate(m, 'choose')}</legend>
        <div class="opts cols">
          ${groups.map((g) =>
            radio('currency', g.currency === this.pick.currency, html`<b>${g.currency}</b><span class="name">${CURRENCY_NAMES[g.currency] ?? ''}</span>${g.options.every((o) => o.amount === g.options[0]!.amount) ? amountOf(g.options[0]!) : nothing}`, () => {
              this.pick = { currency: g.currency };
              this.chooseFailed = false;
            }),
          )}
        </div>
      </fieldset>
      ${group && group.options.length > 1
        ? html`<fieldset>
            <legend>${translate(m, 'network')}</legend>
            <div class="opts nets">
              ${group.options.map((o) =>
                radio('network', o.network === this.pick.network, html`<span class="full">${networkLabel(o.network, o.currency)}</span><span class="short">${networkShort(o.network, o.currency)}</span>${amountOf(o)}`, () => (this.pick = { ...this.pick, network: o.network })),
              )}
            </div>
          </fieldset>`
        : nothing}
      ${this.chooseFailed ? html`<p class="err" role="alert">${translate(m, 'chooseError')}</p>` : nothing}
      <button class="btn primary" part="button" ?disabled=${!option} aria-disabled=${this.busy}>${translate(m, 'continue')}</button>
    </form>`;
  }

  #renderPay(view: CheckoutView, phase: Phase, m: Messages, dueText: string): TemplateResult {
    const address = view.walletAddress;
    if (!address) return html``;
    // The payment URI asks for what is still due (the server builds it so): after a partial payment, the rest.
    const uri = view.paymentUri;
    if (uri && this.#qr?.uri !== uri) this.#qr = { uri, path: qrPath(uri) };
    const qr = uri && this.#qr ? this.#qr.path : null;
    const tag = tagKeys(view.network);
    const field = (what: Copyable, label: MessageKey, copyLabel: MessageKey, value: string) => {
      const done = this.copied === what;
      return html`<div>
        <p class="label">${translate(m, label)}</p>
        <div class="field" part="address">
          <span class="value mono" dir="ltr">${value}</span>
          <button type="button" class="copy ${done ? 'copied' : ''}" part="copy-button" aria-label=${translate(m, done ? 'copied' : copyLabel)} @click=${() => this.#copy(what, value)}>
            ${icon(done ? CHECK : COPY)}<span aria-hidden="true">${translate(m, done ? 'copied' : 'copy')}</span>
          </button>
        </div>
      </div>`;
    };
    // The address first: every customer needs it, the QR code only one paying from another device
    // (on a 320×568 phone the address is then on the first screen).
    return html`<div class="pay">
      ${field('address', 'address', 'copyAddress', address)}
      ${view.destinationTag
        ? html`${field('tag', tag.label, tag.copy, view.destinationTag)}<p class="note warning">${icon(ALERT)}<span>${translate(m, tag.note)}</span></p>`
        : nothing}
      ${view.depositCurrency && view.network
        ? html`<p class="note">${icon(INFO)}<span>${rich(m, 'sendOnly', { currency: view.depositCurrency, network: networkLabel(view.network, view.depositCurrency) })}</span></p>`
        : nothing}
      ${qr
        ? html`<figure class="qr" part="qr">
            <svg viewBox="0 0 ${qr.size} ${qr.size}" role="img" aria-label=${translate(m, 'qr', { amount: dueText })} shape-rendering="crispEdges">
              <rect width="100%" height="100%" fill="#fff"></rect><path d=${qr.d} fill="#000"></path>
            </svg>
            <a href=${uri}>${translate(m, 'openWallet')}</a>
          </figure>`
        : nothing}
    </div>`;
  }

  #renderSteps(phase: Phase, m: Messages): TemplateResult | typeof nothing {
    const steps = stepsOf(phase);
    if (!steps) return nothing;
    const keys: MessageKey[] = ['stepSeen', 'stepConfirming', 'stepReceived'];
    return html`<ol class="steps" aria-label=${translate(m, 'progress')}>
      ${steps.map((s, i) => html`<li class=${s} aria-current=${s === 'current' ? 'step' : nothing}>${translate(m, keys[i]!)}</li>`)}
    </ol>`;
  }

  #renderDeposits(view: CheckoutView, m: Messages, locale: string): TemplateResult | typeof nothing {
    if (!view.deposits.length) return nothing;
    return html`<section class="deposits" part="deposits">
      <h3>${translate(m, 'transfers')}</h3>
      <ul>
        ${view.deposits.map((d) => {
          const refund = d.refund;
          return html`<li>
            <div class="row"><bdi>${formatCrypto(locale, d.amount, d.currency)}</bdi><span class="tag ${depositTone(d.status)}">${translate(m, `d_${d.status}` as MessageKey)}</span></div>
            <div class="muted small">${formatDateTime(locale, d.receivedAt)} · ${translate(m, 'tx')} <span class="mono" title=${d.transactionId}>${shorten(d.transactionId)}</span></div>
            ${refund
              ? html`<div class="small">${rich(m, `r_${refund.status}` as MessageKey, {
                  // What reaches the customer (the network fee taken); one that cannot be refunded names what stays.
                  amount: formatCrypto(locale, refund.status === 'NON_REFUNDABLE' ? refund.amount : refund.sent, d.currency),
                })}</div>`
              : nothing}
          </li>`;
        })}
      </ul>
    </section>`;
  }

  #result(tone: string, path: string, title: string, texts: unknown[], action: unknown = nothing): TemplateResult {
    return html`<div class="result" part="result">
      <span class="badge ${tone}">${icon(path)}</span>
      <h3 tabindex="-1" data-focus>${title}</h3>
      ${texts.filter(Boolean).map((text) => html`<p class="muted">${text}</p>`)}
      ${action}
    </div>`;
  }
}
