// One file's diff as a table (line numbers, +/− marks, the text), for the transcript (a call's
// changes, an approval's proposed change) and the workspace (a changed file, opened): a file of its
// own, so that the transcript and the workspace views need not import each other.

import { diffStats, parseDiff } from "../diff.js";
import type { FileChange } from "../model.js";
import { showControls } from "../text.js";

export function DiffView({ change }: { change: FileChange }) {
  const rows = parseDiff(change.diff ?? "", change.kind);
  const stats = diffStats(rows);
  return (
    <figure class="diff" data-testid="diff" data-path={change.path}>
      <figcaption>
        <span class={`badge kind-${change.kind}`}>{change.kind}</span> <span class="diff-path">{showControls(change.path)}</span>{" "}
        <span class="added">+{stats.added}</span> <span class="removed">−{stats.removed}</span>
      </figcaption>
      {rows.length ? (
        <div class="diff-body" tabIndex={0} role="region" aria-label={`changes to ${change.path}`}>
          <table>
            <tbody>
              {rows.map((r) => (
                <tr class={`d-${r.kind}`}>
                  <td class="ln" aria-hidden="true">
                    {r.old ?? ""}
                  </td>
                  <td class="ln" aria-hidden="true">
                    {r.new ?? ""}
                  </td>
                  <td class="mark" aria-hidden="true">
                    {r.kind === "add" ? "+" : r.kind === "del" ? "−" : ""}
                  </td>
                  <td class="code">
                    {r.kind === "add" ? <span class="sr-only">added: </span> : r.kind === "del" ? <span class="sr-only">removed: </span> : null}
                    {r.text}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </figure>
  );
}
