// Browser notifications and the tab title, DOM-free but for `browserHost()`: when a session in any
// watched room asks for an answer (`interaction.requested`) or a turn ends (`turn.completed`,
// `turn.failed`) while the tab is hidden, a notification says so; clicking it brings the tab forward
// and opens that session. Permission is asked only from a click on the console's own prompt (a
// browser refuses, or remembers as a nuisance, a request made without a user gesture); "Not now"
// hides the prompt for good (localStorage). The tab title counts the sessions waiting on an answer:
// "(2) Ensemble console".

import type { Event, RoomModel, SessionState } from "./model.js";
import { showControls } from "./text.js";

export type Permission = "default" | "granted" | "denied" | "unsupported";

/** What a notification says; `tag` makes a newer one about the same session replace the older. */
export interface NotificationText {
  title: string;
  body: string;
  tag: string;
}

/** Where a notification leads: a session (a side conversation: its source, with the side shown). */
export interface Place {
  room: string;
  session: string;
  side: string | null;
}

/** What the notifier needs of the browser (the unit tests give a fake one). */
export interface NotifyHost {
  permission(): Permission;
  /** `Notification.requestPermission()`: call only from a user gesture. */
  request(): Promise<Permission>;
  /** `document.visibilityState === "hidden"`. */
  hidden(): boolean;
  /** Shows a notification; `onClick` runs when it is clicked (after the tab is focused). */
  show(n: NotificationText, onClick: () => void): void;
  load(key: string): string | null;
  save(key: string, value: string): void;
}

const DISMISSED_KEY = "ensemble.notify.dismissed";
/** The events a notification is about. */
const NOTIFIED = new Set<string>(["interaction.requested", "turn.completed", "turn.failed"]);
/** Event ids remembered against showing one twice (a replay after a reset, a second stream). */
const SEEN_MAX = 500;

/** The tab's title with the number of sessions waiting on an answer in front: "(2) Ensemble console". */
export function titleWith(base: string, waiting: number): string {
  return waiting > 0 ? `(${waiting}) ${base}` : base;
}

/** Sessions (side conversations too) waiting on an answer in these rooms. */
export function waitingSessions(rooms: Iterable<RoomModel>): number {
  let n = 0;
  for (const room of rooms) for (const st of room.sessions.values()) if (st.status === "waiting") n++;
  return n;
}

/** A session's name for a person: its title, or its id while it has a default one. */
export function sessionName(st: SessionState): string {
  const t = st.session.title.trim();
  return showControls(t && t !== "New session" && t !== "Side conversation" ? t : st.id);
}

function clip(s: string, max = 160): string {
  const one = s.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** What to say about an event (null: nothing worth a notification). */
export function notificationFor(roomId: string, name: string, e: Event): NotificationText | null {
  const tag = `ensemble:${roomId}/${e.sessionId}`;
  const where = `${name} in room ${roomId}`;
  switch (e.type) {
    case "interaction.requested": {
      const p = e.payload;
      const what = p.kind === "userInput" ? "has a question for you" : "needs an answer";
      const detail = [p.title, p.command && !p.title.includes(p.command) ? `$ ${p.command}` : ""].filter(Boolean).join(" ");
      return { title: `${where} ${what}`, body: clip(showControls(detail)), tag };
    }
    case "turn.completed":
      return { title: `${where} finished its turn`, body: "The agent is ready for the next message.", tag };
    case "turn.failed":
      return { title: `${where}: the turn failed`, body: clip(showControls(e.payload.error.message)), tag };
    default:
      return null;
  }
}

export class Notifier {
  private seen = new Set<string>();
  private dismissed: boolean;

  constructor(
    private readonly host: NotifyHost,
    private readonly open: (place: Place) => void,
  ) {
    this.dismissed = host.load(DISMISSED_KEY) === "1";
  }

  get permission(): Permission {
    return this.host.permission();
  }

  /** Whether to offer turning notifications on (never asked, not dismissed, and possible here). */
  get prompt(): boolean {
    return !this.dismissed && this.host.permission() === "default";
  }

  /** Asks the browser; call from the prompt's click only. */
  enable(): Promise<Permission> {
    return this.host.request();
  }

  /** "Not now": the prompt is not shown again (in this browser). */
  dismiss(): void {
    this.dismissed = true;
    this.host.save(DISMISSED_KEY, "1");
  }

  /**
   * An event of a watched room. `live`: it happened after the stream's first `hello` (a replay of
   * the log is never announced); `name`: the session's (a function: only worked out when needed,
   * every streamed delta comes here). Returns whether a notification was shown.
   */
  event(place: Place, name: string | (() => string), e: Event, live: boolean): boolean {
    if (!live || !NOTIFIED.has(e.type) || this.host.permission() !== "granted" || !this.host.hidden()) return false;
    const key = `${place.room}/${e.eventId}`;
    if (this.seen.has(key)) return false;
    const text = notificationFor(place.room, typeof name === "string" ? name : name(), e);
    if (!text) return false;
    this.seen.add(key);
    if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.values().next().value as string);
    this.host.show(text, () => this.open(place));
    return true;
  }
}

/** The browser's `Notification`, `document.visibilityState` and localStorage. */
export function browserHost(): NotifyHost {
  const N = (globalThis as { Notification?: typeof Notification }).Notification;
  return {
    permission: () => (N ? (N.permission as Permission) : "unsupported"),
    request: async () => {
      if (!N) return "unsupported";
      try {
        return (await N.requestPermission()) as Permission;
      } catch {
        return N.permission as Permission;
      }
    },
    hidden: () => document.visibilityState === "hidden",
    show: (n, onClick) => {
      if (!N) return;
      try {
        const shown = new N(n.title, { body: n.body, tag: n.tag });
        shown.onclick = () => {
          window.focus();
          onClick();
          shown.close();
        };
      } catch {
        // Some browsers only notify from a service worker: then the title's count is all there is.
      }
    },
    load: (key) => {
      try {
        return localStorage.getItem(key);
      } catch {
        return null;
      }
    },
    save: (key, value) => {
      try {
        localStorage.setItem(key, value);
      } catch {
        // Private mode without storage: the prompt comes back next time.
      }
    },
  };
}
