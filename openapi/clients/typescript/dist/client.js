// The REST client: openapi-fetch typed with the generated `paths`, plus friendly names for the
// document's component schemas. Browser-safe: no Node imports (this file is bundled into the console).
import createClient from "openapi-fetch";
/**
 * Creates the REST client. Every call resolves to `{ data, error, response }` (openapi-fetch):
 * `data` is the typed success body, `error` the typed `ErrorResponse` of a 4xx/5xx.
 */
export function createEnsembleClient(options) {
    const init = {
        baseUrl: options.baseUrl.replace(/\/+$/, ""),
        headers: { Authorization: `Bearer ${options.token}` },
    };
    if (options.fetch)
        init.fetch = options.fetch;
    return createClient(init);
}
/**
 * A refused REST call of the helpers below: `status` is the HTTP status, `code` and `message` come
 * from the error body (`{"error": {"code", "message", "details"?}}`), `error` is that body
 * (undefined when the answer was not one).
 */
export class ApiError extends Error {
    status;
    error;
    name = "ApiError";
    code;
    constructor(what, status, error) {
        super(`${what}: HTTP ${status} ${error?.error.code ?? ""}: ${error?.error.message ?? ""}`);
        this.status = status;
        this.error = error;
        this.code = error?.error.code;
    }
}
/**
 * Makes a token (`POST /v1/tokens`; `api` needs an `admin` token): `{ token, secret }`, the secret
 * shown only this once. `request`: `name` (who holds it; the `actor.name` of what it does), `role`,
 * `rooms` (room ids, or `["*"]` for every room), and `ttlSecs` or `expiresAtMs` for a token that
 * expires. Throws an {@link ApiError} when refused (403 `forbidden` without an admin token, 400, 409
 * `too_many_tokens`).
 */
export async function createToken(api, request) {
    const { data, error, response } = await api.POST("/v1/tokens", { body: request });
    if (!data)
        throw new ApiError(`creating the token ${JSON.stringify(request.name)}`, response.status, error);
    return data;
}
/**
 * Revokes a token at once (`DELETE /v1/tokens/{tokenId}`, admin): its requests are 401 from then on
 * and its room streams end with a `TokenRevokedError` (close code 4003). Resolves to the revoked
 * token (again for one already revoked); throws an {@link ApiError} when refused (404
 * `token_not_found`, 400 `admin_token` for the token file's).
 */
export async function revokeToken(api, tokenId) {
    const { data, error, response } = await api.DELETE("/v1/tokens/{tokenId}", { params: { path: { tokenId } } });
    if (!data)
        throw new ApiError(`revoking the token ${tokenId}`, response.status, error);
    return data;
}
