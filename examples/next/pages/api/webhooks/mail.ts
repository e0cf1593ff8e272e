// Pages Router variant: POST /api/webhooks/mail.
import { createNextPagesHandler } from '@svc/webhooks/next';
import { receivers } from '../../../lib/receivers';

// Required: Next parses API bodies by default and the signature needs the raw bytes. Write it
// literally here (Next reads it statically; an imported config is ignored).
export const config = { api: { bodyParser: false } };

export default createNextPagesHandler(() => receivers().mail);
