// Unit tests of the browser notifications and the tab title (src/notify.ts) with a fake browser: the
// prompt only while the browser has not been asked (and not after "Not now", remembered); a
// notification only for a live event, while the tab is hidden, with permission, once per event; what
// it says for a question, an approval, a finished and a failed turn; its click opens the session; the
// title's count of sessions waiting on an answer across rooms (side conversations too).
import assert from "node:assert/strict";
import { test } from "node:test";
import { RoomModel } from "../src/model.js";
import { notificationFor, Notifier, sessionName, titleWith, waitingSessions, type NotificationText, type NotifyHost, type Permission, type Place } from "../src/notify.js";
import { ev, resetSeq, session } from "./fixtures.js";



class FakeHost implements NotifyHost {
  perm: Permission = "default";
  isHidden = false;
  requests = 0;
  answer: Permission = "granted";
  shown: { n: NotificationText; click: () => void }[] = [];
  store = new Map<string, string>();
  permission() {
    return this.perm;
  }
  async request() {
    this.requests++;
    this.perm = this.answer;
    return this.perm;
  }
  hidden() {
    return this.isHidden;
  }
  show(n: NotificationText, onClick: () => void) {
    this.shown.push({ n, click: onClick });
  }
  load(key: string) {
    return this.store.get(key) ?? null;
  }
  save(key: string, value: string) {
    this.store.set(key, value);
  }
}

const approval = { requestId: "q1", kind: "commandApproval", title: "Run command?", command: "make test", options: ["accept", "decline"] };

test("notify: the prompt is offered until the browser was asked or it was dismissed (remembered)", async () => {
  const host = new FakeHost();
  const n = new Notifier(host, () => {});
  assert.equal(n.prompt, true);
  assert.equal(host.requests, 0, "nothing is asked without a click");
  assert.equal(await n.enable(), "granted");
  assert.equal(host.requests, 1);
  assert.equal(n.prompt, false);

  const denied = new FakeHost();
  denied.perm = "denied";
  assert.equal(new Notifier(denied, () => {}).prompt, false, "a browser that said no is not asked again");
  const none = new FakeHost();
  none.perm = "unsupported";
  assert.equal(new Notifier(none, () => {}).prompt, false, "no Notification (an insecure origin): no prompt");

  const later = new FakeHost();
  const m = new Notifier(later, () => {});
  m.dismiss();
  assert.equal(m.prompt, false);
  assert.equal(new Notifier(later, () => {}).prompt, false, "Not now is remembered (another page of the same browser)");
  assert.equal(later.requests, 0);
});

test("notify: only live events, only while hidden, only with permission, once each; a click opens the session", () => {
  resetSeq();
  const host = new FakeHost();
  const opened: Place[] = [];
  const n = new Notifier(host, (p) => opened.push(p));
  const place = { room: "r", session: "s1", side: null };
  const asked = ev("s1", "interaction.requested", approval, "t1");
  // Not granted yet.
  host.isHidden = true;
  assert.equal(n.event(place, "s1", asked, true), false);
  host.perm = "granted";
  // Visible: the page shows it already.
  host.isHidden = false;
  assert.equal(n.event(place, "s1", asked, true), false);
  host.isHidden = true;
  // A replay of the log (the room's stream from seq 0) is never announced.
  assert.equal(n.event(place, "s1", asked, false), false);
  assert.equal(n.event(place, "s1", asked, true), true);
  assert.equal(n.event(place, "s1", asked, true), false, "the same event once");
  // The name is worked out only for what is shown (not for every streamed delta).
  let named = 0;
  const name = () => (named++, "s1");
  assert.equal(n.event(place, name, ev("s1", "message.delta", { itemId: "m", text: "x" }, "t1"), true), false, "not every event");
  assert.equal(named, 0);
  assert.equal(n.event(place, name, ev("s1", "turn.completed", { turnId: "t1" }, "t1"), true), true);
  assert.equal(named, 1);
  assert.equal(host.shown.length, 2);
  assert.deepEqual(opened, []);
  host.shown[0]!.click();
  assert.deepEqual(opened, [place]);
});

test("notify: what a notification says", () => {
  resetSeq();
  assert.deepEqual(notificationFor("room-a", "build", ev("s1", "interaction.requested", approval, "t1", { roomId: "room-a" })), {
    title: "build in room room-a needs an answer",
    body: "Run command? $ make test",
    tag: "ensemble:room-a/s1",
  });
  const q = notificationFor("r", "s1", ev("s1", "interaction.requested", { requestId: "q2", kind: "userInput", title: "Which  one?\nA or B", options: ["accept"] }, "t1"));
  assert.equal(q?.title, "s1 in room r has a question for you");
  assert.equal(q?.body, "Which one? A or B");
  assert.equal(notificationFor("r", "s1", ev("s1", "turn.completed", { turnId: "t1" }, "t1"))?.title, "s1 in room r finished its turn");
  const failed = notificationFor("r", "s1", ev("s1", "turn.failed", { turnId: "t1", error: { code: "agent_error", message: "the model is overloaded" } }, "t1"));
  assert.deepEqual([failed?.title, failed?.body], ["s1 in room r: the turn failed", "the model is overloaded"]);
  assert.equal(notificationFor("r", "s1", ev("s1", "turn.canceled", { turnId: "t1", reason: "client" }, "t1")), null, "a cancel was someone's own doing");
  assert.equal(notificationFor("r", "s1", ev("s1", "interaction.requested", { ...approval, title: "x".repeat(300) }, "t1"))?.body.length, 160);
});

test("notify: the title counts the sessions waiting on an answer in every watched room", () => {
  resetSeq();
  assert.equal(titleWith("Ensemble console", 0), "Ensemble console");
  assert.equal(titleWith("Ensemble console", 2), "(2) Ensemble console");
  const open = new RoomModel("r", true);
  const other = new RoomModel("o", false);
  open.onEvent(ev("s1", "session.started", { session: session("s1", { title: "Build" }) }));
  open.onEvent(ev("s2", "session.started", { session: session("s2") }));
  open.onEvent(ev("s1", "turn.started", { turnId: "t1", origin: "user", input: [] }, "t1"));
  open.onEvent(ev("s1", "interaction.requested", approval, "t1"));
  // A live-only room knows from its hello that a session waits.
  other.onHello({ type: "hello", roomId: "o", role: "admin", headSeq: 9, sessions: [session("w", { roomId: "o", status: "waiting", activeTurnId: "t" })], sides: [], sessionsTruncated: false });
  assert.equal(waitingSessions([open, other]), 2);
  open.onEvent(ev("s1", "interaction.resolved", { requestId: "q1", decision: "accept", resolvedBy: "client" }, "t1"));
  assert.equal(waitingSessions([open, other]), 1);
  assert.equal(sessionName(open.session("s1")!), "Build");
  assert.equal(sessionName(open.session("s2")!), "s2", "the default title is no name");
});
