// Compiled with `declaration: true` by .ci/consumer/check-types.mjs: a test helper that imports
// `@svc/webhooks/testing` and nothing else (no root entry to borrow names from) and exports values
// inferred from each of its factories. Declaration emit must name every type they reach from
// `./testing` itself (TS2883 otherwise: `export const emitter = createMailEmitter({ clock })` once
// needed `Clock` from a chunk). `{ ...value }` spreads print each member's type too.
import * as testing from '@svc/webhooks/testing';

declare function given<T>(): T;

export const clock = testing.createVirtualClock();
export const clockMembers = { ...clock };
export const realClock = testing.createRealClock();
export const realClockMembers = { ...realClock };
export const emitter = testing.createMailEmitter({ clock });
export const emitterMembers = { ...emitter };
export const crmEmitter = testing.createCrmEmitter({ clock: realClock });
export const crmEmitterMembers = { ...crmEmitter };
export const emitted = emitter.emit('bounced');
export const crmEmitted = crmEmitter.emit('deal.won');
export const mailApi = testing.createMailApi(emitter);
export const mailApiMembers = { ...mailApi };
export const crmApi = testing.createCrmApi(crmEmitter);
export const crmApiMembers = { ...crmApi };
export const fixtures = testing.createFixtures();
export const fixturesMembers = { ...fixtures };
export const bounced = testing.mailPayload('bounced');
export const dealWon = testing.crmData('deal.won');
export const signedMail = testing.createSignedRequest({ service: 'mail', event: 'bounced', secret: 'whsec_x' });
export const signedCrm = testing.createSignedRequest({ service: 'crm', event: 'deal.won', secret: 'whsec_x' });
export const storeChecks = testing.storeContract(given<Parameters<typeof testing.storeContract>[0]>());
export const inboxChecks = testing.inboxContract(given<Parameters<typeof testing.inboxContract>[0]>());
export const credentials = [testing.CRM_TEST_TOKEN, testing.MAIL_TEST_API_KEY] as const;
