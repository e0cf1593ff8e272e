import { isWebhookError, WebhookError } from '../../shared/errors.js';

/** A JSON response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

/** The error body of both mocked APIs: `{ error: { code, message } }` (the specs do not show one). */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return json(status, { error: { code, message } }, headers);
}

/** A `WebhookError` thrown by the emitter as an API error; anything else is a 500 `internal_error`. */
export function fromError(error: unknown, headers: Record<string, string> = {}): Response {
  if (isWebhookError(error)) return json(error.status, error.toJSON(), headers);
  return errorResponse(500, 'internal_error', 'The mock API failed; see the test output.', headers);
}

/** The JSON body of a request, or `invalid_json`. An empty body is `{}`. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new WebhookError('invalid_json', 'The request body is not valid JSON.');
  }
}

/** A route of a mocked API: path segments after the prefix (`:name` captures), one handler per method. */
export interface Route<C> {
  path: string;
  methods: Partial<
    Record<
      string,
      (context: C, params: Record<string, string>, request: Request) => Promise<Response> | Response
    >
  >;
}

/** The route matching `segments`, with its captured params. */
export function matchRoute<C>(
  routes: readonly Route<C>[],
  segments: readonly string[],
): { route: Route<C>; params: Record<string, string> } | null {
  for (const route of routes) {
    const parts = route.path.split('/').filter(Boolean);
    if (parts.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = parts.every((part, i) => {
      const segment = decodeURIComponent(segments[i]!);
      if (part.startsWith(':')) params[part.slice(1)] = segment;
      return part.startsWith(':') || part === segment;
    });
    if (ok) return { route, params };
  }
  return null;
}

/** The path segments of `request` under `baseUrl` + `prefix`, or null when it is not under them. */
export function segmentsUnder(request: Request, baseUrl: string, prefix: string): string[] | null {
  const url = new URL(request.url);
  const base = new URL(baseUrl);
  if (url.origin !== base.origin) return null;
  const root = `${base.pathname.replace(/\/$/, '')}${prefix}`;
  if (url.pathname !== root && !url.pathname.startsWith(`${root}/`)) return null;
  return url.pathname.slice(root.length).split('/').filter(Boolean);
}
