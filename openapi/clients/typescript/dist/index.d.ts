export * from "./client.js";
export * from "./room.js";
