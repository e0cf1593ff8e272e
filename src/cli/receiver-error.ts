/** The error a receiver of this package answers with, read back from a recorded response body. */

/** `{ "error": { "code", "message" } }`, as this package's receivers answer a refused or failed delivery. */
export interface ReceiverError {
  code: string;
  message?: string;
}

/** The receiver's own error from a response body; undefined for any other body (or none). */
export function receiverError(body: string | null | undefined): ReceiverError | undefined {
  if (!body) return undefined;
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    if (typeof error?.code !== 'string') return undefined;
    return typeof error.message === 'string'
      ? { code: error.code, message: error.message }
      : { code: error.code };
  } catch {
    return undefined;
  }
}
