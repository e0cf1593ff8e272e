/**
 * The request headers of one email-service delivery (email-service §6 "Request headers"); `vendor`
 * replaces the word "Svc". Content-Type is added because every body is JSON (§4).
 */
export function mailDeliveryHeaders(
  vendor: string,
  event: string,
  signature: string,
  deliveryId: string,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [`X-${vendor}MAIL-Event`]: event,
    [`X-${vendor}MAIL-Sig`]: signature,
    [`X-${vendor}MAIL-Id`]: deliveryId,
  };
}

/** The request headers of one CRM delivery (crm-service §6 "Request headers"), exactly as listed. */
export function crmDeliveryHeaders(
  vendor: string,
  event: string,
  signature: string,
  deliveryId: string,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    [`X-${vendor}-Signature`]: signature,
    [`X-${vendor}-Event`]: event,
    [`X-${vendor}-Delivery`]: deliveryId,
    // crm-service §9: the User-Agent carries the version 1.0.
    'User-Agent': `${vendor}-CRM-Webhook/1.0`,
  };
}
