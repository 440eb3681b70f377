// Access control as the console says it, from the API's data alone (no DOM, no Preact): what a role
// may do, the URL a shared token opens, a token's rooms and expiry in words, and who did something
// ("by NAME"). The UI renders these; the unit tests check them.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import { showControls } from "./text.js";

export type Role = Schemas["Role"];
export type Actor = Schemas["Actor"];
export type Me = Schemas["Me"];
export type TokenInfo = Schemas["TokenInfo"];

/** The roles, each allowed everything the ones before it are. */
export const ROLES: readonly Role[] = ["viewer", "operator", "approver", "admin"];

/** Whether `role` may do what needs `need` (an unknown role, e.g. not read yet or revoked, may nothing). */
export function allows(role: Role | null | undefined, need: Role): boolean {
  if (!role) return false;
  return ROLES.indexOf(role) >= ROLES.indexOf(need);
}

/** What each role a token can be given here may do, for the Share dialog. */
export const ROLE_TEXT: Record<Role, string> = {
  viewer: "viewer: watches the room, acts on nothing",
  operator: "operator: also starts sessions, sends, cancels, restores and commits",
  approver: "approver: also answers approvals and questions",
  admin: "admin: everything, tokens included",
};

/** The roles the Share dialog offers (an admin token is made elsewhere, on purpose). */
export const SHARE_ROLES: readonly Role[] = ["viewer", "operator", "approver"];

/** The Share dialog's expiry choices; `secs: null` never expires. */
export const EXPIRY_CHOICES: readonly { id: string; label: string; secs: number | null }[] = [
  { id: "1h", label: "1 hour", secs: 3600 },
  { id: "1d", label: "1 day", secs: 86_400 },
  { id: "7d", label: "7 days", secs: 7 * 86_400 },
  { id: "30d", label: "30 days", secs: 30 * 86_400 },
  { id: "never", label: "never", secs: null },
];
export const DEFAULT_EXPIRY = "7d";
export const DEFAULT_SHARE_NAME = "shared device";

/**
 * The console URL that opens `room` with `secret`: the same fragment keys the console reads
 * (`#token=…&room=…`, as in the URL the server prints), so the token never reaches a server log.
 */
export function shareUrl(origin: string, secret: string, room: string | null): string {
  const parts = [`token=${encodeURIComponent(secret)}`];
  if (room) parts.push(`room=${encodeURIComponent(room)}`);
  return `${origin.replace(/\/+$/, "")}/#${parts.join("&")}`;
}

/** A length of time in words, rounded to its largest unit ("7 days", "1 hour", "5 minutes"). */
export function durationWords(ms: number): string {
  const s = Math.abs(ms) / 1000;
  if (s < 60) return "less than a minute";
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.round(s / 3600);
  if (hours < 24) return plural(hours, "hour");
  return plural(Math.round(s / 86_400), "day");
}

/** When a moment was, from `now` ("3 minutes ago", "just now"). */
export function agoText(atMs: number, now: number): string {
  const d = now - atMs;
  if (d < 60_000) return "just now";
  return `${durationWords(d)} ago`;
}

/** A token's expiry in words: "expires in 7 days", "expired 2 hours ago", "never expires". */
export function expiryText(expiresAtMs: number | null | undefined, now: number): string {
  if (expiresAtMs == null) return "never expires";
  if (expiresAtMs <= now) return `expired ${agoText(expiresAtMs, now)}`;
  return `expires in ${durationWords(expiresAtMs - now)}`;
}

/** A token's rooms: "all rooms", "room demo", "rooms a, b". */
export function roomsText(rooms: readonly string[]): string {
  if (rooms.includes("*")) return "all rooms";
  return `${rooms.length === 1 ? "room" : "rooms"} ${rooms.map(showControls).join(", ")}`;
}

/** A listed token's state: revoked, expired, or when it expires. */
export function tokenStateText(t: TokenInfo, now: number): string {
  if (t.revokedAtMs != null) return `revoked ${agoText(t.revokedAtMs, now)}`;
  return expiryText(t.expiresAtMs, now);
}

/** A listed token's last use. */
export function lastUseText(t: TokenInfo, now: number): string {
  return t.lastUsedAtMs != null ? `last used ${agoText(t.lastUsedAtMs, now)}` : "never used";
}

/** " by NAME" for what a request did (empty when no actor: the agent's own doing). */
export function byText(actor: Actor | null | undefined): string {
  return actor ? ` by ${showControls(actor.name)}` : "";
}

/** The header's "viewer · shared device". */
export function whoText(role: Role | null, name: string | null): string {
  if (!role) return name ? showControls(name) : "";
  return name ? `${role} · ${showControls(name)}` : role;
}
