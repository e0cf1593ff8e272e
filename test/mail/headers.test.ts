import type { IncomingHttpHeaders } from 'node:http';
import { describe, expect, it } from 'vitest';
import { readHeader, readHeaderString } from '../../src/core/read-header.js';
import { constructMailEvent, isWebhookError } from '../../src/index.js';
import { MAIL_HEADER_NAMES, resolveMailHeaderNames } from '../../src/mail/header-names.js';
import { SECRET, sign } from './fixtures.js';

const body = JSON.stringify({
  event: 'delivered',
  client_id: 'c1',
  message_id: 'm1',
  to: 'a@example.com',
  provider: 'gmail',
});

describe('mail header names', () => {
  it('defaults to the literal names of email-service §6', () => {
    expect(MAIL_HEADER_NAMES).toEqual({
      event: 'X-SvcMAIL-Event',
      signature: 'X-SvcMAIL-Sig',
      deliveryId: 'X-SvcMAIL-Id',
    });
  });

  it('reads web Headers with the documented case', async () => {
    const headers = new Headers({
      'X-SvcMAIL-Sig': sign(body),
      'X-SvcMAIL-Event': 'delivered',
      'X-SvcMAIL-Id': 'dlv_w',
    });
    expect(await constructMailEvent(body, headers, SECRET)).toMatchObject({
      name: 'delivered',
      deliveryId: 'dlv_w',
    });
  });

  it("reads Node's IncomingHttpHeaders (lowercase keys)", async () => {
    const headers: IncomingHttpHeaders = {
      'x-svcmail-sig': sign(body),
      'x-svcmail-event': 'delivered',
      'x-svcmail-id': 'dlv_n',
    };
    expect(await constructMailEvent(body, headers, SECRET)).toMatchObject({ deliveryId: 'dlv_n' });
  });

  it('reads a hand-built record in any case', async () => {
    const headers = { 'X-SVCMAIL-SIG': sign(body), 'x-SvcMail-Event': 'delivered', 'X-SvcMAIL-Id': 'dlv_m' };
    expect(await constructMailEvent(body, headers, SECRET)).toMatchObject({ deliveryId: 'dlv_m' });
  });

  it('renames any header by option, case-insensitively', async () => {
    const headerNames = {
      signature: 'X-AcmeMAIL-Sig',
      event: 'x-acmemail-event',
      deliveryId: 'X-ACMEMAIL-ID',
    };
    const headers = new Headers({
      'x-acmemail-sig': sign(body),
      'X-AcmeMAIL-Event': 'delivered',
      'X-AcmeMAIL-Id': 'dlv_a',
    });
    expect(await constructMailEvent(body, headers, SECRET, { headerNames })).toMatchObject({
      deliveryId: 'dlv_a',
    });
  });

  it('renaming one header keeps the defaults of the others', async () => {
    const headers = { 'x-acme-sig': sign(body), 'x-svcmail-event': 'delivered', 'x-svcmail-id': 'dlv_p' };
    const event = await constructMailEvent(body, headers, SECRET, {
      headerNames: { signature: 'X-Acme-Sig' },
    });
    expect(event.deliveryId).toBe('dlv_p');
  });

  it('does not read the default header once renamed', async () => {
    const headers = { 'x-svcmail-sig': sign(body), 'x-svcmail-event': 'delivered', 'x-svcmail-id': 'dlv_1' };
    const error = await constructMailEvent(body, headers, SECRET, {
      headerNames: { signature: 'X-Acme-Sig' },
    }).catch((e: unknown) => e);
    expect(isWebhookError(error) && error.code).toBe('signature_missing');
  });

  it('resolves names once to lowercase and recognises the result', () => {
    const resolved = resolveMailHeaderNames({ event: 'X-Acme-Event' });
    expect(resolved).toEqual({
      event: 'x-acme-event',
      signature: 'x-svcmail-sig',
      deliveryId: 'x-svcmail-id',
    });
    expect(resolveMailHeaderNames(resolved)).toBe(resolved);
    expect(resolveMailHeaderNames()).toBe(resolveMailHeaderNames());
  });

  it('refuses an empty header name', () => {
    expect(() => resolveMailHeaderNames({ signature: ' ' })).toThrowError(/headerNames.signature/);
  });
});

describe('readHeader', () => {
  it('returns the same for web Headers and Node records', () => {
    const web = new Headers({ 'X-Test': 'a' });
    expect(readHeader(web, 'x-test')).toBe('a');
    expect(readHeader({ 'x-test': 'a' }, 'x-test')).toBe('a');
    expect(readHeader(web, 'x-none')).toBeUndefined();
    expect(readHeader({}, 'x-none')).toBeUndefined();
  });

  it('keeps repeated Node values as an array; readHeaderString joins them like Headers', () => {
    const web = new Headers();
    web.append('x-test', 'a');
    web.append('x-test', 'b');
    expect(readHeader({ 'x-test': ['a', 'b'] }, 'x-test')).toEqual(['a', 'b']);
    expect(readHeaderString({ 'x-test': ['a', 'b'] }, 'x-test')).toBe(readHeaderString(web, 'x-test'));
  });

  it('treats an empty value as absent', () => {
    expect(readHeaderString({ 'x-test': '' }, 'x-test')).toBeUndefined();
    expect(readHeaderString(new Headers({ 'x-test': '' }), 'x-test')).toBeUndefined();
  });
});
