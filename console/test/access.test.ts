// Unit tests of access control as the console says it: what each role may do, the shared link's
// URL (read back by the console's own fragment readers), expiry and last use in words, a token's
// rooms, and who did what ("declined by alice", "Files restored … by alice", "Session ended by …")
// from the events' `actor`, and nothing said when an event carries none.
import assert from "node:assert/strict";
import { test } from "node:test";
import { agoText, allows, byText, durationWords, EXPIRY_CHOICES, expiryText, lastUseText, roomsText, ROLES, shareUrl, tokenStateText, whoText, type TokenInfo } from "../src/access.js";
import { RoomModel } from "../src/model.js";
import { resolutionText } from "../src/present.js";
import { ev, resetSeq, session } from "./fixtures.js";



const alice = { tokenId: "tok_a", name: "alice" };

test("roles: each may what the ones before it may; no role may nothing", () => {
  assert.deepEqual(ROLES, ["viewer", "operator", "approver", "admin"]);
  assert.equal(allows("viewer", "viewer"), true);
  assert.equal(allows("viewer", "operator"), false);
  assert.equal(allows("operator", "operator"), true);
  assert.equal(allows("operator", "approver"), false);
  assert.equal(allows("approver", "approver"), true);
  assert.equal(allows("approver", "admin"), false);
  assert.equal(allows("admin", "approver"), true);
  assert.equal(allows(null, "viewer"), false);
  assert.equal(allows(undefined, "viewer"), false);
});

test("the shared link: the console's own fragment keys, the secret percent-encoded", () => {
  const url = shareUrl("http://127.0.0.1:7878", "ens_a+b/c=&d", "demo");
  assert.equal(url, "http://127.0.0.1:7878/#token=ens_a%2Bb%2Fc%3D%26d&room=demo");
  // Read back the way the console reads it: `token=` decoded, `room` through URLSearchParams.
  const hash = new URL(url).hash.slice(1);
  const token = hash.split("&").find((p) => p.startsWith("token="))!.slice("token=".length);
  assert.equal(decodeURIComponent(token), "ens_a+b/c=&d");
  assert.equal(new URLSearchParams(hash).get("room"), "demo");
  assert.equal(shareUrl("http://h:1/", "s", "a:b"), "http://h:1/#token=s&room=a%3Ab");
  assert.equal(shareUrl("http://h:1", "s", null), "http://h:1/#token=s");
});

test("expiry and last use in words", () => {
  const now = 1_000_000_000_000;
  assert.deepEqual(
    EXPIRY_CHOICES.map((c) => c.label),
    ["1 hour", "1 day", "7 days", "30 days", "never"],
  );
  for (const c of EXPIRY_CHOICES) {
    // Just made: a moment less than the whole time is left.
    if (c.secs !== null) assert.equal(expiryText(now + c.secs * 1000 - 250, now), `expires in ${c.label}`);
  }
  assert.equal(expiryText(null, now), "never expires");
  assert.equal(expiryText(undefined, now), "never expires");
  assert.equal(expiryText(now - 2 * 3600_000, now), "expired 2 hours ago");
  assert.equal(durationWords(30_000), "less than a minute");
  assert.equal(durationWords(60_000), "1 minute");
  assert.equal(durationWords(45 * 60_000), "45 minutes");
  assert.equal(durationWords(3599_000), "1 hour");
  assert.equal(durationWords(36 * 3600_000), "2 days");
  assert.equal(agoText(now - 5_000, now), "just now");
  assert.equal(agoText(now - 3 * 60_000, now), "3 minutes ago");
  const t: TokenInfo = { id: "tok_1", name: "phone", role: "viewer", rooms: ["demo"], createdAtMs: now - 1000, createdBy: "admin", active: true, expiresAtMs: now + 86_400_000 };
  assert.equal(tokenStateText(t, now), "expires in 1 day");
  assert.equal(lastUseText(t, now), "never used");
  assert.equal(lastUseText({ ...t, lastUsedAtMs: now - 120_000 }, now), "last used 2 minutes ago");
  assert.equal(tokenStateText({ ...t, active: false, revokedAtMs: now - 10_000 }, now), "revoked just now");
});

test("a token's rooms and the header's role and name", () => {
  assert.equal(roomsText(["*"]), "all rooms");
  assert.equal(roomsText(["demo"]), "room demo");
  assert.equal(roomsText(["a", "b"]), "rooms a, b");
  assert.equal(whoText("viewer", "shared device"), "viewer · shared device");
  assert.equal(whoText("admin", null), "admin");
  assert.equal(whoText(null, null), "");
  assert.equal(byText(alice), " by alice");
  assert.equal(byText(null), "");
  // A name is shown, never obeyed: bidirectional controls are made visible.
  assert.equal(byText({ tokenId: "x", name: "a\u202Eb" }), " by a⟦U+202E⟧b");
});

test("who answered: the decision's words plus by NAME, only when the event names an actor", () => {
  assert.equal(resolutionText({ requestId: "q", decision: "accept", resolvedBy: "client" }, undefined, alice), "accepted by alice");
  assert.equal(resolutionText({ requestId: "q", decision: "decline", resolvedBy: "client" }, undefined, alice), "declined by alice");
  assert.equal(resolutionText({ requestId: "q", decision: "acceptForSession", resolvedBy: "client" }, undefined, alice), "accepted for the session by alice");
  assert.equal(resolutionText({ requestId: "q", decision: "accept", resolvedBy: "client" }, "Allow", alice), "Chose “Allow” (accepted by alice)");
  assert.equal(resolutionText({ requestId: "q", decision: "cancel", resolvedBy: "close" }, undefined, alice), "canceled by alice (by close)");
  // No actor: as before.
  assert.equal(resolutionText({ requestId: "q", decision: "decline", resolvedBy: "client" }, undefined, null), "declined (answered)");
  assert.equal(resolutionText({ requestId: "q", decision: "accept", resolvedBy: "client" }, "Allow", undefined), "Chose “Allow” (accepted; answered)");
  assert.equal(resolutionText({ requestId: "q", decision: "cancel", resolvedBy: "restart" }, undefined, null), "canceled (by restart)");
});

test("model: the actor of an answer, a turn, a restore, a commit and a close; the hello's role", () => {
  resetSeq();
  const room = new RoomModel("r", true);
  room.onHello({ type: "hello", roomId: "r", headSeq: 0, sessions: [], sides: [], sessionsTruncated: false, role: "approver" });
  assert.equal(room.role, "approver");
  room.onEvent(ev("s1", "session.started", { session: session("s1") }, undefined, { actor: alice }));
  room.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input: [{ type: "text", text: "/run ls" }] }, "t1", { actor: alice }));
  room.onEvent(ev("s1", "interaction.requested", { requestId: "q1", kind: "commandApproval", title: "Run ls?", options: ["accept", "decline"], command: "ls" }, "t1"));
  room.onEvent(ev("s1", "interaction.requested", { requestId: "q2", kind: "commandApproval", title: "Run pwd?", options: ["accept", "decline"], command: "pwd" }, "t1"));
  room.onEvent(ev("s1", "interaction.resolved", { requestId: "q1", decision: "decline", resolvedBy: "client" }, "t1", { actor: { tokenId: "tok_b", name: "bob" } }));
  // An answer without an actor (an older log, or the server's own doing).
  room.onEvent(ev("s1", "interaction.resolved", { requestId: "q2", decision: "accept", resolvedBy: "client" }, "t1"));
  room.onEvent(ev("s1", "turn.completed", { turnId: "t1" }, "t1"));
  room.onEvent(ev("s1", "workspace.restored", { checkpoint: "ck1", undo: "ck0" }, undefined, { actor: alice }));
  room.onEvent(ev("s1", "workspace.committed", { commit: "abc1234def", branch: "b", message: "m" }, undefined, { actor: alice }));
  const st = room.session("s1")!;
  const items = st.transcript.items;
  const turn = items.find((i) => i.kind === "turn");
  assert.ok(turn?.kind === "turn");
  assert.deepEqual(turn.actor, alice);
  const [q1, q2] = items.filter((i) => i.kind === "interaction");
  assert.ok(q1?.kind === "interaction" && q2?.kind === "interaction");
  assert.deepEqual(q1.answeredBy, { tokenId: "tok_b", name: "bob" });
  assert.equal(resolutionText(q1.resolved!, undefined, q1.answeredBy), "declined by bob");
  assert.equal(q2.answeredBy, null);
  assert.equal(resolutionText(q2.resolved!, undefined, q2.answeredBy), "accepted (answered)");
  const restored = items.find((i) => i.kind === "restored");
  assert.ok(restored?.kind === "restored");
  assert.deepEqual(restored.actor, alice);
  const committed = items.find((i) => i.kind === "committed");
  assert.ok(committed?.kind === "committed");
  assert.deepEqual(committed.actor, alice);
  assert.equal(st.closedBy, null);
  room.onEvent(ev("s1", "session.completed", { session: session("s1", { status: "completed", live: false, updatedAtMs: 5 }), reason: "closed" }, undefined, { actor: alice }));
  assert.deepEqual(st.closedBy, alice);
  const infos = st.transcript.items.filter((i) => i.kind === "info").map((i) => (i.kind === "info" ? i.text : ""));
  assert.ok(infos.includes("Session ended by alice (closed)"), infos.join(" | "));

  // A session that ends without a request (the agent's own end) names nobody.
  room.onEvent(ev("s2", "session.started", { session: session("s2") }));
  room.onEvent(ev("s2", "session.completed", { session: session("s2", { status: "completed", live: false, updatedAtMs: 5 }), reason: "provider_exited" }));
  assert.equal(room.session("s2")!.closedBy, null);
  assert.ok(room.session("s2")!.transcript.items.some((i) => i.kind === "info" && i.text === "Session ended (provider_exited)"));
});
