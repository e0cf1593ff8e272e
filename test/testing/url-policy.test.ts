import { describe, expect, it } from 'vitest';
import { checkWebhookUrl } from '../../src/testing/url-policy.js';

const refused = [
  'http://127.0.0.1/hook',
  'http://127.1/hook',
  'http://2130706433/hook', // decimal 127.0.0.1
  'http://0x7f000001/hook', // hex
  'http://0177.0.0.1/hook', // octal
  'http://10.1.2.3/',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://169.254.1.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://0.0.0.0/',
  'http://[::1]/',
  'http://[::]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[fd00:ec2::254]/',
  'http://[fc00::1]/',
  'http://[fe80::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::ffff:8.8.8.8]/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost/',
  'http://metadata.google.internal/',
  'http://intranet/',
];

describe('checkWebhookUrl', () => {
  it.each(refused)('refuses %s with webhook_url_refused (422)', (url) => {
    expect(() => checkWebhookUrl(url)).toThrow(
      expect.objectContaining({ code: 'webhook_url_refused', status: 422 }),
    );
  });

  it.each([
    'https://hooks.example.com/mail',
    'http://203.0.113.10:8080/x',
    'https://[2001:db8::1]/x',
    'https://172.32.0.1/',
  ])('accepts the public %s', (url) => {
    expect(checkWebhookUrl(url)).toBe(new URL(url).href);
  });

  it('rejects what is not an absolute http(s) URL with invalid_payload', () => {
    for (const url of ['ftp://example.com/', '/relative', 42, 'https://user:pw@example.com/']) {
      expect(() => checkWebhookUrl(url)).toThrow(
        expect.objectContaining({ code: 'invalid_payload', status: 400 }),
      );
    }
  });

  it('allowPrivateNetworks admits local servers but never cloud metadata', () => {
    expect(checkWebhookUrl('http://127.0.0.1:3000/hooks', { allowPrivateNetworks: true })).toBe(
      'http://127.0.0.1:3000/hooks',
    );
    expect(checkWebhookUrl('http://localhost:3000/', { allowPrivateNetworks: true })).toBe(
      'http://localhost:3000/',
    );
    for (const url of [
      'http://169.254.169.254/',
      'http://[fd00:ec2::254]/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      expect(() => checkWebhookUrl(url, { allowPrivateNetworks: true })).toThrow(
        expect.objectContaining({ code: 'webhook_url_refused' }),
      );
    }
  });

  it('allowHosts admits only the listed hosts', () => {
    expect(checkWebhookUrl('http://127.0.0.1:9/', { allowHosts: ['127.0.0.1'] })).toBe('http://127.0.0.1:9/');
    expect(checkWebhookUrl('http://[::1]:9/', { allowHosts: ['::1'] })).toBe('http://[::1]:9/');
    expect(() => checkWebhookUrl('http://10.0.0.1/', { allowHosts: ['127.0.0.1'] })).toThrow(
      expect.objectContaining({ code: 'webhook_url_refused' }),
    );
  });
});
