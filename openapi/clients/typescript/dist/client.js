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
