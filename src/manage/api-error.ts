import { WebhookError, type WebhookErrorCode } from '../shared/errors.js';

/** The service's own `code` and `message` from an error body, whatever its shape. */
export function readErrorBody(body: unknown): { code?: string; message?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  // { error: { code, message } } (the emulated APIs), { error: 'code', message }, { code, message }.
  const nested = typeof record.error === 'object' && record.error !== null ? record.error : record;
  const fields = nested as Record<string, unknown>;
  const code =
    typeof fields.code === 'string'
      ? fields.code
      : typeof record.error === 'string'
        ? record.error
        : undefined;
  const message = typeof fields.message === 'string' ? fields.message : undefined;
  return {
    ...(code !== undefined ? { code: code.slice(0, 100) } : {}),
    // Bounded: the text is the service's, and ends up in logs.
    ...(message !== undefined ? { message: message.slice(0, 300) } : {}),
  };
}

function codeFor(status: number, apiCode: string | undefined): WebhookErrorCode {
  if (status === 401) return 'unauthorized';
  // email-service §5.4 `insufficient_scope`; the CRM (§7) does not show its code: any 403 is a scope problem.
  if (status === 403) return 'insufficient_scope';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  // email-service §7: 429 `api_rate_limit_exceeded`.
  if (status === 429 || apiCode === 'api_rate_limit_exceeded') return 'rate_limited';
  if (status >= 500) return 'api_unavailable';
  return 'request_invalid';
}

/**
 * The {@link WebhookError} of a non-2xx answer of a management API. `status` is the service's status,
 * `apiCode` its error code, `resetAt` (429) when the window resets.
 */
export function errorFromResponse(
  service: string,
  request: { method: string; path: string },
  status: number,
  body: unknown,
  resetAt: number | null,
): WebhookError {
  const { code: apiCode, message } = readErrorBody(body);
  const code = codeFor(status, apiCode);
  const said = message ? `: ${message}` : '.';
  const hint =
    code === 'rate_limited' && resetAt !== null
      ? ` The window resets at ${new Date(resetAt).toISOString()}.`
      : '';
  return new WebhookError(
    code,
    `The ${service} API answered ${status}${apiCode ? ` ${apiCode}` : ''} to ${request.method} ${request.path}${said}${hint}`,
    {
      status,
      ...(apiCode !== undefined ? { apiCode } : {}),
      ...(code === 'rate_limited' && resetAt !== null ? { resetAt } : {}),
    },
  );
}
