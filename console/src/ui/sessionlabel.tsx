// How a session is named and its status shown (its title or id, its status badge): the same in the
// session list, the open session's head, the crumb and the side panel.

import { statusLabel, type SessionState, type SessionStatus } from "../model.js";
import { showControls } from "../shown.js";

/** A session's title, or its id while it has the default title (a side conversation's: `sideName`). */
export function displayName(st: SessionState): string {
  const t = st.session.title.trim();
  return showControls(t && t !== "New session" ? t : st.id);
}

export function Badge({ status, canAnswer = true }: { status: SessionStatus; canAnswer?: boolean }) {
  return (
    <span class={`badge ${status}`} data-testid="status-badge" data-status={status}>
      {statusLabel(status, canAnswer)}
    </span>
  );
}
