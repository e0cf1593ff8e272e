// DELIBERATELY WRONG, kept to show (and test) what happens when `config` is forgotten: Next's body
// parser consumes the request, and every delivery is refused with 500 raw_body_unavailable, whose
// message names the fix. Do not copy this file.
import { createNextPagesHandler } from '@svc/webhooks/next';
import { receivers } from '../../lib/receivers';

export default createNextPagesHandler(() => receivers().mail);
