// The console's screens: header (connection, token), rooms and sessions (nav), the open session
// (settings, transcript, composer) and beside it the goal panel and the open side conversation.
// This file lays them out; each lives in a file of its own (header, nav, session, aside).

import { useEffect, useState } from "preact/hooks";
import type { App } from "../app.js";
import { ShareDialog } from "./share.js";
import { RoomUsagePanel } from "./usage.js";
import { titleWith, waitingSessions } from "../notify.js";
import { displayName } from "./sessionlabel.js";
import { Connection, Messages, TokenBox, WhoAmI } from "./header.js";
import { RoomList, SessionList } from "./nav.js";
import { SessionView } from "./session.js";
import { GoalPanel, SidePanel } from "./aside.js";
import { NewSession } from "./newsession.js";
import { PageView, pagesFor } from "./pages.js";

/** The page's own title (index.html's), before any count. */
const BASE_TITLE = typeof document !== "undefined" ? document.title : "Ensemble console";

export function Root({ app }: { app: App }) {
  const [, setTick] = useState(0);
  useEffect(() => {
    const off = app.subscribe(() => setTick((t) => t + 1));
    // What changed between the first render and this subscription (e.g. no token) is shown now.
    setTick((t) => t + 1);
    return off;
  }, [app]);
  const [navOpen, setNavOpen] = useState(false);
  // The tab's title counts the sessions waiting on an answer in every watched room: "(2) Ensemble console".
  // Only what this token can answer: a viewer's tab does not count an approval it cannot give.
  const waiting = app.may("approver") ? waitingSessions(app.watchedRooms()) : 0;
  useEffect(() => {
    document.title = titleWith(BASE_TITLE, waiting);
  }, [waiting]);
  const room = app.room();
  const session = app.selectedSession ? room?.session(app.selectedSession) : undefined;
  const side = app.selectedSide ? room?.session(app.selectedSide) : undefined;
  return (
    <div class={`layout${navOpen ? " nav-open" : ""}`}>
      <header class="top">
        <button type="button" class="nav-toggle" aria-expanded={navOpen} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          ☰ <span class="sr-only">Rooms and sessions</span>
        </button>
        <h1>Ensemble</h1>
        {app.selectedRoom ? (
          <span class="crumb">
            {app.selectedRoom}
            {session ? ` / ${displayName(session)}` : ""}
          </span>
        ) : null}
        <Connection app={app} />
        {app.token ? (
          <span class="row pages-menu" data-testid="pages-menu">
            {pagesFor(app).map((p) => (
              <button type="button" class={`link${app.page === p.page ? " on" : ""}`} data-testid={`open-page-${p.page}`} aria-pressed={app.page === p.page} onClick={() => app.openPage(app.page === p.page ? null : p.page)}>
                {p.label}
              </button>
            ))}
          </span>
        ) : null}
        <WhoAmI app={app} />
        <TokenBox app={app} />
      </header>
      <Messages app={app} />
      <nav id="nav" class="nav" aria-label="Rooms and sessions">
        <RoomList app={app} onPick={() => setNavOpen(false)} />
        {app.selectedRoom ? <SessionList app={app} onPick={() => setNavOpen(false)} /> : null}
        {app.selectedRoom ? <RoomUsagePanel app={app} roomId={app.selectedRoom} /> : null}
      </nav>
      <main class="main" id="main">
        {!app.token ? (
          <p class="empty">Paste the token above to start.</p>
        ) : app.page ? (
          <PageView app={app} page={app.page} />
        ) : !app.selectedRoom ? (
          <p class="empty">Open a room on the left (or type a new room id) to see its sessions.</p>
        ) : app.watch(app.selectedRoom)?.state === "unavailable" ? (
          <p class="empty error" role="alert" data-testid="room-unavailable">
            {app.watch(app.selectedRoom)?.error}
          </p>
        ) : app.showsNewSession() ? (
          <section class="main-form" aria-label={`New session in ${app.selectedRoom}`}>
            <h2>New session in {app.selectedRoom}</h2>
            <NewSession app={app} onDone={() => app.openNewSession(false)} />
          </section>
        ) : !session ? (
          <p class="empty">{room && room.canonical.length ? "Pick a session on the left." : "No session in this room yet: start one on the left."}</p>
        ) : (
          <SessionView app={app} st={session} key={session.id} />
        )}
      </main>
      <aside class="aside" aria-label="Goal and side conversation">
        {session && !session.isSide ? <GoalPanel app={app} st={session} key={`goal-${session.id}`} /> : null}
        {session && side && side.session.sourceSessionId === session.id ? <SidePanel app={app} st={side} key={side.id} /> : null}
      </aside>
      {app.shareOpen && app.selectedRoom && app.may("admin") ? <ShareDialog app={app} room={app.selectedRoom} key={app.selectedRoom} /> : null}
    </div>
  );
}
