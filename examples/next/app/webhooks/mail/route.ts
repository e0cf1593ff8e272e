// POST /webhooks/mail. App Router route handlers get a web Request with the body unread: no config needed.
import { createNextRouteHandlers } from '@svc/webhooks/next';
import { receivers } from '../../../lib/receivers';

export const { POST } = createNextRouteHandlers(() => receivers().mail);
