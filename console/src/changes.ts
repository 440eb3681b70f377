// How a session's workspace reads to a person, from the API's data alone (no DOM, no Preact): a
// turn's changed files (status, line counts, binary), a summary line, the header's workspace and
// fork lineage, short commits and file sizes. The UI renders these; the unit tests check them.

import type { Schemas } from "../../openapi/clients/typescript/src/client.js";
import { showControls } from "./text.js";

export type ChangedFile = Schemas["ChangedFile"];
export type SessionWorkspace = Schemas["SessionWorkspace"];
export type ForkedFrom = Schemas["ForkedFrom"];

const STATUS_TEXT: Record<Schemas["ChangeStatus"], string> = {
  added: "added",
  modified: "modified",
  deleted: "deleted",
  renamed: "renamed",
  type_changed: "type changed",
};

/** A changed file's status as said ("renamed from a.txt"). */
export function statusText(f: ChangedFile): string {
  const s = STATUS_TEXT[f.status] ?? f.status;
  return f.status === "renamed" && f.oldPath ? `${s} from ${showControls(f.oldPath)}` : s;
}

/** The kind the diff view takes (`FileChange.kind`) for a changed file's status. */
export function diffKind(status: Schemas["ChangeStatus"]): "add" | "delete" | "update" {
  return status === "added" ? "add" : status === "deleted" ? "delete" : "update";
}

/** A file's line counts ("+3 −1"), or "binary" (binary files have none). */
export function countsText(f: ChangedFile): string {
  return f.binary ? "binary" : `+${f.added} −${f.removed}`;
}

/** One line for a list of changed files: "2 files · +3 −1", "no changes". */
export function changesSummary(files: ChangedFile[]): string {
  if (!files.length) return "no changes";
  let added = 0;
  let removed = 0;
  let binary = 0;
  for (const f of files) {
    if (f.binary) binary++;
    else {
      added += f.added;
      removed += f.removed;
    }
  }
  const parts = [`${files.length} file${files.length === 1 ? "" : "s"}`, `+${added} −${removed}`];
  if (binary) parts.push(`${binary} binary`);
  return parts.join(" · ");
}

/** A commit's short form (git's 7 hex digits). */
export function shortSha(sha: string): string {
  return /^[0-9a-f]{8,}$/i.test(sha) ? sha.slice(0, 7) : sha;
}

/** The header's workspace line: "worktree of /repo on ensemble/r/s", "checkpoints in /repo", or null. */
export function workspaceText(ws: SessionWorkspace | null | undefined): string | null {
  if (!ws) return null;
  if (ws.kind === "worktree") {
    const parts = [`worktree${ws.repo ? ` of ${showControls(ws.repo)}` : ""}`];
    if (ws.branch) parts.push(`on branch ${showControls(ws.branch)}`);
    if (ws.baseCommit) parts.push(`from ${shortSha(ws.baseCommit)}`);
    return parts.join(" ");
  }
  if (!ws.checkpoints) return null;
  return `checkpoints around every turn${ws.repo ? ` in ${showControls(ws.repo)}` : ""}`;
}

/** Whether a session's workspace has checkpoints (so changes, restore and fork apply). */
export function hasCheckpoints(ws: SessionWorkspace | null | undefined): boolean {
  return !!ws && (ws.kind === "worktree" || ws.checkpoints);
}

/**
 * "forked from Refactor at turn 2": the source's name (its title, else its id) and the turn's
 * number in its transcript when it is known here, else the turn's id.
 */
export function forkText(f: ForkedFrom, sourceName: string | null, turnNumber: number | null): string {
  return `forked from ${showControls(sourceName ?? f.sessionId)} at ${turnNumber !== null ? `turn ${turnNumber}` : `turn ${showControls(f.turnId)}`}`;
}

/** A byte count for a person: "812 B", "4.2 KiB", "3.0 MiB". */
export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A directory entry's path below `dir` (the workspace's top is ""). */
export function childPath(dir: string, name: string): string {
  return dir ? `${dir.replace(/\/+$/, "")}/${name}` : name;
}
