// The REST client: openapi-fetch typed with the generated `paths`, plus friendly names for the
// document's component schemas. Browser-safe: no Node imports (this file is bundled into the console).

import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** Every component schema of the OpenAPI document, by its name (`Schemas["Goal"]`). */
export type Schemas = components["schemas"];

// Resources.
export type Session = Schemas["Session"];
export type SessionStatus = Schemas["SessionStatus"];
export type Goal = Schemas["Goal"];
export type Interaction = Schemas["Interaction"];
export type AnswerRequest = Schemas["AnswerRequest"];
export type QuestionAnswer = Schemas["QuestionAnswer"];
export type Decision = Schemas["Decision"];
export type InputItem = Schemas["InputItem"];
export type ErrorResponse = Schemas["ErrorResponse"];

// Events: `Event` is the discriminated union (narrow it with `switch (e.type)`).
export type Event = Schemas["Event"];
export type EventType = Event["type"];
/** The variant of `Event` whose `type` is `T`, e.g. `EventOf<"turn.started">`. */
export type EventOf<T extends EventType> = Extract<Event, { type: T }>;
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

// Room WebSocket frames: `ServerFrame` is the discriminated union the server sends.
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
export function createEnsembleClient(options: EnsembleClientOptions): EnsembleClient {
  const init: Parameters<typeof createClient<paths>>[0] = {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${options.token}` },
  };
  if (options.fetch) init.fetch = options.fetch;
  return createClient<paths>(init);
}
