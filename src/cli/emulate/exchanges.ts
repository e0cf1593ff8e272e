/**
 * What the page's inspector shows of each attempt: the request the emulator sent (URL, headers, body)
 * and the app's answer (status, headers, body), recorded by the fetch the emitters call. Bounded:
 * each body is cut at 16 KiB (the rest of a response is never downloaded), at most 64 response
 * headers of 1 KiB each are kept, and only the 500 most recent attempts.
 */
import { readLimited } from '../http.js';

/** The caps of {@link createExchangeLog}. */
export const EXCHANGE_LIMITS = { bodyChars: 16_384, headers: 64, headerChars: 1_024, attempts: 500 };

/** A body as kept: its start, its whole size, and whether it was cut. */
export interface KeptBody {
  text: string;
  /** The request body's size in bytes; for a response, the bytes read (at most the cap and a chunk). */
  bytes: number;
  truncated: boolean;
}

/** One attempt's request and answer (`response` null when none arrived: refused, reset, timed out). */
export interface Exchange {
  /** Wall-clock time the request left, epoch ms. */
  sentAt: number;
  request: { method: string; url: string; headers: Array<[string, string]>; body: KeptBody };
  response: { status: number; headers: Array<[string, string]>; body: KeptBody } | null;
  /** Why no answer arrived. */
  error: string | null;
}

type Limits = typeof EXCHANGE_LIMITS;

function keepText(text: string, limits: Limits): KeptBody {
  const truncated = text.length > limits.bodyChars;
  return {
    text: truncated ? text.slice(0, limits.bodyChars) : text,
    bytes: Buffer.byteLength(text),
    truncated,
  };
}

function keepHeaders(headers: Headers, limits: Limits): Array<[string, string]> {
  const kept: Array<[string, string]> = [];
  for (const [name, value] of headers) {
    if (kept.length === limits.headers) break;
    kept.push([name.slice(0, limits.headerChars), value.slice(0, limits.headerChars)]);
  }
  return kept;
}

// Statuses a Response cannot be built with a body (or at all): their answer is passed on unread.
const rebuildable = (status: number) => status >= 200 && status <= 599;
const NULL_BODY = new Set([204, 205, 304]);

/**
 * A fetch for the emitters that records each exchange, and the record by delivery id and attempt.
 * `deliveryIdOf` reads the delivery id from the request headers; each attempt report files the
 * oldest exchange of its delivery not yet filed.
 */
export function createExchangeLog(
  base: typeof fetch,
  deliveryIdOf: (headers: Headers) => string | null,
  limits: Limits = EXCHANGE_LIMITS,
) {
  const unfiled = new Map<string, Exchange[]>();
  let unfiledCount = 0;
  const filed = new Map<string, Exchange>();

  function hold(deliveryId: string | null, exchange: Exchange): void {
    if (deliveryId === null) return;
    // An exchange whose report never comes (the emulator stopping) must not accumulate.
    if (unfiledCount >= limits.attempts) {
      const [oldest] = unfiled.keys();
      if (oldest !== undefined) {
        unfiledCount -= unfiled.get(oldest)!.length;
        unfiled.delete(oldest);
      }
    }
    unfiled.set(deliveryId, [...(unfiled.get(deliveryId) ?? []), exchange]);
    unfiledCount++;
  }

  const recordingFetch: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const deliveryId = deliveryIdOf(headers);
    const body = typeof init?.body === 'string' ? init.body : '';
    const exchange: Exchange = {
      sentAt: Date.now(),
      request: {
        method: init?.method ?? 'GET',
        url: String(input instanceof Request ? input.url : input),
        headers: keepHeaders(headers, limits),
        body: keepText(body, limits),
      },
      response: null,
      error: null,
    };
    let response: Response;
    try {
      response = await base(input, init);
    } catch (error) {
      exchange.error = error instanceof Error ? error.message : String(error);
      hold(deliveryId, exchange);
      throw error;
    }
    if (!rebuildable(response.status)) {
      exchange.response = {
        status: response.status,
        headers: keepHeaders(response.headers, limits),
        body: keepText('', limits),
      };
      hold(deliveryId, exchange);
      return response;
    }
    // Read once, up to the cap (an endless answer ends here), and handed on to the emitter as read.
    const read = await readLimited(response, limits.bodyChars);
    const text = read.text.slice(0, limits.bodyChars);
    exchange.response = {
      status: response.status,
      headers: keepHeaders(response.headers, limits),
      body: { text, bytes: Buffer.byteLength(read.text), truncated: !read.complete || text !== read.text },
    };
    hold(deliveryId, exchange);
    return new Response(NULL_BODY.has(response.status) ? null : text, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };

  return {
    fetch: recordingFetch,
    /** Files the oldest unfiled exchange of `deliveryId` as its attempt `attempt`. */
    file(deliveryId: string, attempt: number): void {
      const list = unfiled.get(deliveryId);
      const exchange = list?.shift();
      if (!exchange) return;
      unfiledCount--;
      if (list!.length === 0) unfiled.delete(deliveryId);
      filed.set(`${deliveryId}#${attempt}`, exchange);
      if (filed.size > limits.attempts) {
        const [oldest] = filed.keys();
        filed.delete(oldest!);
      }
    },
    /** The exchange of one attempt, if still kept. */
    get(deliveryId: string, attempt: number): Exchange | undefined {
      return filed.get(`${deliveryId}#${attempt}`);
    },
  };
}
