// The REST API as the console's controller calls it: an error answer (or a network failure) as an
// ApiFailure with one line for a person, openapi-fetch results unwrapped, the ids of requests, and
// what the console says when the server refuses the token.

import type { ErrorResponse } from "../../openapi/clients/typescript/src/index.js";
import { errorText } from "./present.js";
import type { Schemas } from "../../openapi/clients/typescript/src/client.js";

export type ProviderInfo = Schemas["ProviderInfo"];
export type Room = Schemas["Room"];

/** An error answer of the API, or a network failure, as one line for a person. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The error's `details`, when the server gave any. */
    readonly details: Record<string, unknown> | null = null,
  ) {
    super(message);
  }
}

/** What the console says when the server answers 401: the token it has is not (or no longer) the server's. */
export const TOKEN_REFUSED = "The server refused this token (401): it is not the server's current token. Paste the token from the console URL the server printed (after #token=), or open that URL.";
/** What the console says when a stream is closed with 4003. */
export const TOKEN_REVOKED = "This token was revoked or has expired (the server closed the connection, 4003): ask whoever shared it for a new link, or paste another token.";

/** An openapi-fetch error answer (or a response without one) as an ApiFailure. */
export function failure(error: unknown, response: Response | undefined): ApiFailure {
  const e = (error as ErrorResponse | undefined)?.error;
  const status = response?.status ?? 0;
  if (e) {
    const details = e.details && typeof e.details === "object" ? (e.details as Record<string, unknown>) : null;
    return new ApiFailure(status, e.code, errorText(status, e.code, e.message, details), details);
  }
  return new ApiFailure(status, "http_error", `HTTP ${response?.status ?? "error"}`);
}

/** Unwraps an openapi-fetch result: the data, or throws an ApiFailure. */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await p;
  } catch (e) {
    throw new ApiFailure(0, "network", `the server cannot be reached (${(e as Error).message})`);
  }
  if (r.error !== undefined || !r.response.ok) throw failure(r.error, r.response);
  return r.data as T;
}

/** A random id for `clientSubmitId` and side `requestId`s. */
export function randomId(prefix: string): string {
  const b = new Uint8Array(8);
  crypto.getRandomValues(b);
  return `${prefix}-${[...b].map((x) => x.toString(16).padStart(2, "0")).join("")}`;
}
