import type { HttpClient } from './http-client.js';
import type { CallOptions } from './http-types.js';
import type { CreateMailApiKey, MailApiKey, MailIdentity } from './mail-types.js';
import { listOf, recordOf } from './normalize.js';
import { id } from './path-id.js';

/** The email service's auth routes that automation needs (email-service §4, §5). */
export function mailAuthMethods(http: HttpClient) {
  return {
    /** `GET /api/status`: whether the API is up (no authentication needed). */
    status: (call?: CallOptions): Promise<unknown> => http.request('GET', '/api/status', { ...call }),
    /** `GET /api/v1/auth/me`: who the credential is, and its scopes. */
    me: async (call?: CallOptions): Promise<MailIdentity> =>
      (await http.request<MailIdentity>('GET', '/api/v1/auth/me', { ...call })) as MailIdentity,
    /** `POST /api/v1/auth/api-keys` (admin key): a new key; its `value` is returned only now. */
    createApiKey: async (input: CreateMailApiKey, call?: CallOptions): Promise<MailApiKey> =>
      recordOf<MailApiKey>(
        await http.request('POST', '/api/v1/auth/api-keys', { ...call, body: input }),
        'email',
        'API key',
      ),
    /** `GET /api/v1/auth/api-keys` (emulated API's route): key records, never their values. */
    listApiKeys: async (call?: CallOptions): Promise<MailApiKey[]> =>
      listOf(
        await http.request('GET', '/api/v1/auth/api-keys', { ...call }),
        'email',
        'keys',
      ) as MailApiKey[],
    /** `DELETE /api/v1/auth/api-keys/:id` (the spec does not show the route; docs/manage-clients.md). */
    revokeApiKey: async (keyId: string, call?: CallOptions): Promise<void> => {
      await http.request('DELETE', `/api/v1/auth/api-keys/${id(keyId)}`, { ...call });
    },
  };
}
