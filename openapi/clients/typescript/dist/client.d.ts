import { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
export type { components, operations, paths } from "./schema.js";
/** Every component schema of the OpenAPI document, by its name (`Schemas["Goal"]`). */
export type Schemas = components["schemas"];
export type Session = Schemas["Session"];
export type SessionStatus = Schemas["SessionStatus"];
export type Goal = Schemas["Goal"];
export type Interaction = Schemas["Interaction"];
export type AnswerRequest = Schemas["AnswerRequest"];
export type QuestionAnswer = Schemas["QuestionAnswer"];
export type Decision = Schemas["Decision"];
export type InputItem = Schemas["InputItem"];
export type ErrorResponse = Schemas["ErrorResponse"];
/** `viewer` < `operator` < `approver` < `admin`: each may do everything the ones before it may. */
export type Role = Schemas["Role"];
export type TokenInfo = Schemas["TokenInfo"];
export type CreateToken = Schemas["CreateToken"];
export type CreatedToken = Schemas["CreatedToken"];
export type TokenList = Schemas["TokenList"];
export type Me = Schemas["Me"];
/** Who caused an event (`event.actor`, on events a request caused): a token's id and name. */
export type Actor = Schemas["Actor"];
export type AuditEntry = Schemas["AuditEntry"];
export type AuditList = Schemas["AuditList"];
export type Event = Schemas["Event"];
export type EventType = Event["type"];
/** The variant of `Event` whose `type` is `T`, e.g. `EventOf<"turn.started">`. */
export type EventOf<T extends EventType> = Extract<Event, {
    type: T;
}>;
export type SessionStartedEvent = Schemas["SessionStartedEvent"];
export type SessionUpdatedEvent = Schemas["SessionUpdatedEvent"];
export type SessionCompletedEvent = Schemas["SessionCompletedEvent"];
export type SessionFailedEvent = Schemas["SessionFailedEvent"];
export type TurnStartedEvent = Schemas["TurnStartedEvent"];
export type TurnCompletedEvent = Schemas["TurnCompletedEvent"];
export type TurnFailedEvent = Schemas["TurnFailedEvent"];
export type TurnCanceledEvent = Schemas["TurnCanceledEvent"];
export type TurnSteeredEvent = Schemas["TurnSteeredEvent"];
export type MessageDeltaEvent = Schemas["MessageDeltaEvent"];
export type MessageCompletedEvent = Schemas["MessageCompletedEvent"];
export type ReasoningDeltaEvent = Schemas["ReasoningDeltaEvent"];
export type ReasoningCompletedEvent = Schemas["ReasoningCompletedEvent"];
export type CallStartedEvent = Schemas["CallStartedEvent"];
export type CallUpdatedEvent = Schemas["CallUpdatedEvent"];
export type CallCompletedEvent = Schemas["CallCompletedEvent"];
export type InteractionRequestedEvent = Schemas["InteractionRequestedEvent"];
export type InteractionResolvedEvent = Schemas["InteractionResolvedEvent"];
export type UsageUpdatedEvent = Schemas["UsageUpdatedEvent"];
export type CommandsUpdatedEvent = Schemas["CommandsUpdatedEvent"];
export type PlanUpdatedEvent = Schemas["PlanUpdatedEvent"];
export type GoalUpdatedEvent = Schemas["GoalUpdatedEvent"];
export type GoalClearedEvent = Schemas["GoalClearedEvent"];
export type GoalReconcileRequiredEvent = Schemas["GoalReconcileRequiredEvent"];
export type NoticeEvent = Schemas["NoticeEvent"];
export type TurnChangesEvent = Schemas["TurnChangesEvent"];
export type WorkspaceRestoredEvent = Schemas["WorkspaceRestoredEvent"];
export type WorkspaceCommittedEvent = Schemas["WorkspaceCommittedEvent"];
export type ServerFrame = Schemas["ServerFrame"];
export type ClientFrame = Schemas["ClientFrame"];
export type HelloFrame = Schemas["HelloFrame"];
export type EventFrame = Schemas["EventFrame"];
export type SideEventFrame = Schemas["SideEventFrame"];
export type ResyncFrame = Schemas["ResyncFrame"];
export type PongFrame = Schemas["PongFrame"];
export type ErrorFrame = Schemas["ErrorFrame"];
export interface EnsembleClientOptions {
    /** The server's origin (and path prefix, if behind a proxy), e.g. `http://127.0.0.1:7878`. */
    baseUrl: string;
    /** The bearer token (`DATA_DIR/token` or `--token-file`); sent as `Authorization: Bearer …`. */
    token: string;
    /** A fetch implementation (default `globalThis.fetch`). */
    fetch?: (input: Request) => Promise<Response>;
}
/** The typed REST client: `client.GET("/v1/rooms/{roomId}/events", { params: … })` etc. */
export type EnsembleClient = Client<paths>;
/**
 * Creates the REST client. Every call resolves to `{ data, error, response }` (openapi-fetch):
 * `data` is the typed success body, `error` the typed `ErrorResponse` of a 4xx/5xx.
 */
export declare function createEnsembleClient(options: EnsembleClientOptions): EnsembleClient;
/**
 * A refused REST call of the helpers below: `status` is the HTTP status, `code` and `message` come
 * from the error body (`{"error": {"code", "message", "details"?}}`), `error` is that body
 * (undefined when the answer was not one).
 */
export declare class ApiError extends Error {
    readonly status: number;
    readonly error: ErrorResponse | undefined;
    readonly name = "ApiError";
    readonly code: string | undefined;
    constructor(what: string, status: number, error: ErrorResponse | undefined);
}
/**
 * Makes a token (`POST /v1/tokens`; `api` needs an `admin` token): `{ token, secret }`, the secret
 * shown only this once. `request`: `name` (who holds it; the `actor.name` of what it does), `role`,
 * `rooms` (room ids, or `["*"]` for every room), and `ttlSecs` or `expiresAtMs` for a token that
 * expires. Throws an {@link ApiError} when refused (403 `forbidden` without an admin token, 400, 409
 * `too_many_tokens`).
 */
export declare function createToken(api: EnsembleClient, request: CreateToken): Promise<CreatedToken>;
/**
 * Revokes a token at once (`DELETE /v1/tokens/{tokenId}`, admin): its requests are 401 from then on
 * and its room streams end with a `TokenRevokedError` (close code 4003). Resolves to the revoked
 * token (again for one already revoked); throws an {@link ApiError} when refused (404
 * `token_not_found`, 400 `admin_token` for the token file's).
 */
export declare function revokeToken(api: EnsembleClient, tokenId: string): Promise<TokenInfo>;
