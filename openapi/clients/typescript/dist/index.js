// @ensemble/client: the typed REST client and the room WebSocket stream.
export * from "./client.js";
export * from "./room.js";
