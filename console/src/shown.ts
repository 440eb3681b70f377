// What the console shows of an agent's text that is not prose: commands (an approval's too), tool
// names, arguments and output, questions and their choices, plans, model names, goals, mode and
// option names. Each is shown with its bidirectional controls visible (`showControls`), so that
// `sh ./invoice<U+202E>fdp.sh` cannot read as `invoicehs.pdf` on the card that asks to run it.
// Messages and reasoning are prose and stay as written.

import type { Item } from "./model.js";
import { showControls } from "./text.js";

export { showControls };

type Call = Extract<Item, { kind: "call" }>;
type Plan = Extract<Item, { kind: "plan" }>;

/** Optional agent text, shown; absent stays absent (for `title` attributes and the like). */
export function shown(s: string | null | undefined): string | undefined {
  return s ? showControls(s) : undefined;
}

/**
 * A call as shown: its command or tool name, the tool's name beside a command, its arguments, its
 * cwd, and its output (`ls` of a file named with an override would list it reversed).
 */
export function callHead(item: Pick<Call, "command" | "name" | "input" | "cwd" | "output">): {
  title: string;
  tool: string | null;
  args: string | null;
  cwd: string | null;
  output: string;
} {
  const args = item.input && Object.keys(item.input).length ? showControls(JSON.stringify(item.input)) : null;
  return {
    title: showControls(item.command ?? item.name),
    tool: item.command ? showControls(item.name) : null,
    args: item.command ? null : args,
    cwd: item.cwd ? showControls(item.cwd) : null,
    output: showControls(item.output),
  };
}

/** The command an approval asks to run, as its card shows it: `$ command`, and where. */
export function approvalCommand(r: { command?: string | null; cwd?: string | null }): { line: string; cwd: string | null } | null {
  if (!r.command) return null;
  return { line: `$ ${showControls(r.command)}`, cwd: r.cwd ? `\n# in ${showControls(r.cwd)}` : null };
}

/** A question as asked: its header (`Header: `) and its text. */
export function questionText(q: { header?: string | null; question: string }): { header: string | null; question: string } {
  return { header: q.header ? `${showControls(q.header)}: ` : null, question: showControls(q.question) };
}

/** A plan's explanation and steps. */
export function planText(item: Pick<Plan, "explanation" | "steps">): { explanation: string | null; steps: string[] } {
  return { explanation: item.explanation ? showControls(item.explanation) : null, steps: item.steps.map((s) => showControls(s.step)) };
}

/** The model a session was started with, after the session's other particulars. */
export function modelText(model: string | null | undefined): string {
  return model ? ` · model ${showControls(model)}` : "";
}
