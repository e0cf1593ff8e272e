/** The fix `svc-webhooks verify` prints for each failure code (docs/errors.md has the meanings). */
export const FIXES: Record<string, string> = {
  signature_missing:
    'The signature header is absent: pass the captured headers with --headers (X-SvcMAIL-Sig for mail, X-Svc-Signature for crm), or --vendor if your headers use another name.',
  signature_header_repeated: 'Keep exactly one signature header in the headers file.',
  signature_malformed:
    'The header must be "sha256=" followed by 64 lowercase hex digits; copy it unchanged from the request.',
  signature_mismatch:
    "Check the secret (the webhook's own, rotated?) and that the body file holds the exact bytes received (not re-formatted JSON, no added newline: keep them with the receivers' capture hook).",
  secret_invalid:
    'Pass the whole webhook secret (at least 16 characters) without leading/trailing whitespace (often a newline from a .env file).',
  invalid_json: 'The signature matched but the body is not a JSON object: the sender signed something else.',
  invalid_payload:
    "The signature matched but the payload does not match the event's schema (see the paths listed).",
  event_missing: 'Add the event header (X-SvcMAIL-Event) for mail; the CRM body must carry "event".',
  event_mismatch: "The event header and the body's event disagree: the headers belong to another delivery.",
  delivery_id_missing: 'Add the delivery id header (X-SvcMAIL-Id / X-Svc-Delivery).',
  delivery_id_invalid:
    'The delivery id must be 1-256 visible ASCII characters (mail) or a UUID equal to the body\'s "id" (crm): the headers belong to another request.',
  event_too_old:
    "The signed timestamp is older than the receiver's maxEventAgeMs: an old capture, or a resend the age limit refuses.",
  event_in_future:
    "The signed timestamp is ahead of this machine's clock by more than 5 minutes: check the clock.",
  delivery_id_mismatch:
    'X-Svc-Delivery and the body\'s "id" disagree: the headers belong to another delivery.',
};
