// Unified diffs of file changes (`FileChange.diff`) as rows for a side-by-numbers view: each row is
// an added, deleted, context or header line with its old and new line numbers.

export type DiffRowKind = "add" | "del" | "ctx" | "hunk" | "meta";
export interface DiffRow {
  kind: DiffRowKind;
  text: string;
  old: number | null;
  new: number | null;
}

export interface DiffStats {
  added: number;
  removed: number;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/**
 * Parses a file change's diff. A unified diff (`@@` hunks, with or without `---`/`+++` headers)
 * keeps its structure; text without hunks is the whole file: added for `add`, removed for
 * `delete`, else shown as context.
 */
export function parseDiff(diff: string, kind: string): DiffRow[] {
  const text = diff.replace(/\r\n?/g, "\n").replace(/\n$/, "");
  if (!text) return [];
  const lines = text.split("\n");
  if (!lines.some((l) => HUNK.test(l))) {
    const k: DiffRowKind = kind === "add" ? "add" : kind === "delete" ? "del" : "ctx";
    return lines.map((l, i) => ({ kind: k, text: l, old: k === "add" ? null : i + 1, new: k === "del" ? null : i + 1 }));
  }
  const rows: DiffRow[] = [];
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const line of lines) {
    const h = HUNK.exec(line);
    if (h) {
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      inHunk = true;
      rows.push({ kind: "hunk", text: line, old: null, new: null });
    } else if (line.startsWith("diff ")) {
      inHunk = false;
      rows.push({ kind: "meta", text: line, old: null, new: null });
    } else if (!inHunk || line.startsWith("\\")) {
      rows.push({ kind: "meta", text: line, old: null, new: null });
    } else if (line.startsWith("+")) {
      rows.push({ kind: "add", text: line.slice(1), old: null, new: newNo++ });
    } else if (line.startsWith("-")) {
      rows.push({ kind: "del", text: line.slice(1), old: oldNo++, new: null });
    } else {
      rows.push({ kind: "ctx", text: line.startsWith(" ") ? line.slice(1) : line, old: oldNo++, new: newNo++ });
    }
  }
  return rows;
}

export function diffStats(rows: DiffRow[]): DiffStats {
  let added = 0;
  let removed = 0;
  for (const r of rows) {
    if (r.kind === "add") added++;
    else if (r.kind === "del") removed++;
  }
  return { added, removed };
}
