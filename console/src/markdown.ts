// A small Markdown parser for agent and user messages: text in, a syntax tree out. It never produces
// HTML: the tree is rendered into DOM nodes by `ui/markdown.tsx`, every string as a text node, so
// nothing in a message can become markup. Links keep their target only for http(s) and mailto.
//
// Blocks: paragraphs (a newline is a line break, as in chat), ATX headings, fenced code (an
// unclosed fence, as while a reply streams, runs to the end), block quotes, bullet, ordered and task
// lists (nested by indentation), GFM tables and thematic breaks. Inlines: code spans, strong,
// emphasis, strikethrough, links, autolinks and bare URLs, backslash escapes.

export type Inline =
  | { t: "text"; v: string }
  | { t: "code"; v: string }
  | { t: "strong" | "em" | "del"; c: Inline[] }
  | { t: "link"; href: string | null; c: Inline[] }
  | { t: "br" };

export type Align = "left" | "right" | "center" | null;

export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "h"; level: number; c: Inline[] }
  | { t: "code"; lang: string; v: string; open: boolean }
  | { t: "list"; ordered: boolean; start: number; items: ListItem[] }
  | { t: "quote"; c: Block[] }
  | { t: "hr" }
  | { t: "table"; align: Align[]; head: Inline[][]; rows: Inline[][][] };

export interface ListItem {
  /** `null`: not a task; else whether its box is ticked. */
  task: boolean | null;
  c: Block[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?(?:\s+#+)?\s*$/;
const HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST = /^( {0,3})([-*+]|\d{1,9}[.)])(\s+(.*))?$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

/** Parses Markdown into blocks. Total: any input gives a tree. */
export function parseMarkdown(src: string): Block[] {
  return parseBlocks(src.replace(/\r\n?/g, "\n").split("\n"), 0);
}

function parseBlocks(lines: string[], depth: number): Block[] {
  const out: Block[] = [];
  let i = 0;
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push({ t: "p", c: parseInline(para.join("\n")) });
    para = [];
  };
  while (i < lines.length) {
    const line = lines[i] ?? "";
    if (!line.trim()) {
      flush();
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const marker = fence[1] ?? "```";
      const body: string[] = [];
      let open = true;
      i++;
      while (i < lines.length) {
        const l = lines[i] ?? "";
        const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(l);
        if (close && close[1]?.[0] === marker[0] && (close[1]?.length ?? 0) >= marker.length) {
          open = false;
          i++;
          break;
        }
        body.push(l);
        i++;
      }
      out.push({ t: "code", lang: (fence[2] ?? "").toLowerCase(), v: body.join("\n"), open });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      flush();
      out.push({ t: "h", level: heading[1]?.length ?? 1, c: parseInline(heading[2] ?? "") });
      i++;
      continue;
    }
    if (HR.test(line) && !(para.length && /^ {0,3}-+\s*$/.test(line))) {
      flush();
      out.push({ t: "hr" });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      flush();
      const inner: string[] = [];
      while (i < lines.length) {
        const m = QUOTE.exec(lines[i] ?? "");
        if (m) inner.push(m[1] ?? "");
        else if ((lines[i] ?? "").trim() && inner.length && (inner[inner.length - 1] ?? "").trim()) inner.push(lines[i] ?? "");
        else break;
        i++;
      }
      out.push({ t: "quote", c: depth > 8 ? [{ t: "p", c: parseInline(inner.join("\n")) }] : parseBlocks(inner, depth + 1) });
      continue;
    }
    const list = LIST.exec(line);
    if (list && (list[4] !== undefined || !para.length) && depth <= 8) {
      flush();
      const [block, next] = parseList(lines, i, depth);
      out.push(block);
      i = next;
      continue;
    }
    if (line.includes("|") && TABLE_SEP.test(lines[i + 1] ?? "") && (lines[i + 1] ?? "").includes("-")) {
      const head = splitRow(line);
      const align = splitRow(lines[i + 1] ?? "").map((c): Align => {
        const l = c.startsWith(":");
        const r = c.endsWith(":");
        return l && r ? "center" : r ? "right" : l ? "left" : null;
      });
      if (head.length === align.length) {
        flush();
        i += 2;
        const rows: Inline[][][] = [];
        while (i < lines.length && (lines[i] ?? "").trim() && (lines[i] ?? "").includes("|")) {
          const cells = splitRow(lines[i] ?? "");
          rows.push(head.map((_, k) => parseInline(cells[k] ?? "")));
          i++;
        }
        out.push({ t: "table", align, head: head.map((h) => parseInline(h)), rows });
        continue;
      }
    }
    para.push(line);
    i++;
  }
  flush();
  return out;
}

function splitRow(line: string): string[] {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const cells: string[] = [];
  let cur = "";
  for (let k = 0; k < s.length; k++) {
    const ch = s[k];
    if (ch === "\\" && s[k + 1] === "|") {
      cur += "|";
      k++;
    } else if (ch === "|") {
      cells.push(cur.trim());
      cur = "";
    } else cur += ch;
  }
  cells.push(cur.trim());
  return cells;
}

/** A list starting at `start`: its items (each parsed as blocks, nested lists included) and the next line. */
function parseList(lines: string[], start: number, depth: number): [Block, number] {
  const first = LIST.exec(lines[start] ?? "");
  const ordered = /\d/.test(first?.[2] ?? "");
  const startNo = ordered ? Number.parseInt(first?.[2] ?? "1", 10) : 1;
  const items: ListItem[] = [];
  let i = start;
  while (i < lines.length) {
    const m = LIST.exec(lines[i] ?? "");
    if (!m || /\d/.test(m[2] ?? "") !== ordered) break;
    const indent = (m[1]?.length ?? 0) + (m[2]?.length ?? 0) + Math.min(4, Math.max(1, (m[3] ?? " ").length - (m[4] ?? "").length));
    const body: string[] = [m[4] ?? ""];
    i++;
    let blank = false;
    while (i < lines.length) {
      const l = lines[i] ?? "";
      if (!l.trim()) {
        blank = true;
        body.push("");
        i++;
        continue;
      }
      const lead = l.length - l.trimStart().length;
      if (lead >= indent) {
        body.push(l.slice(indent));
      } else if (!blank && !LIST.exec(l) && !FENCE.test(l) && !HEADING.test(l) && !QUOTE.test(l)) {
        body.push(l.trim()); // a lazy continuation of the item's paragraph
      } else break;
      blank = false;
      i++;
    }
    while (body.length && !(body[body.length - 1] ?? "").trim()) body.pop();
    let task: boolean | null = null;
    const tm = /^\[([ xX])\]\s+/.exec(body[0] ?? "");
    if (tm) {
      task = tm[1] !== " ";
      body[0] = (body[0] ?? "").slice(tm[0].length);
    }
    items.push({ task, c: parseBlocks(body, depth + 1) });
    // A blank line between items keeps the list going; anything else not a marker ends it.
    if (!LIST.test(lines[i] ?? "")) break;
  }
  return [{ t: "list", ordered, start: startNo, items }, i];
}

const PUNCT = /[!-/:-@[-`{-~]/;

/** Parses inline Markdown. */
export function parseInline(src: string, depth = 0): Inline[] {
  const out: Inline[] = [];
  let text = "";
  const push = (n: Inline) => {
    if (text) out.push({ t: "text", v: text });
    text = "";
    out.push(n);
  };
  let i = 0;
  while (i < src.length) {
    const ch = src[i] ?? "";
    const rest = src.slice(i);
    if (ch === "\\" && src[i + 1] === "\n") {
      push({ t: "br" });
      i += 2;
      continue;
    }
    if (ch === "\\" && PUNCT.test(src[i + 1] ?? "")) {
      text += src[i + 1];
      i += 2;
      continue;
    }
    if (ch === "\n") {
      text = text.replace(/ +$/, "");
      push({ t: "br" });
      i++;
      continue;
    }
    if (ch === "`") {
      const run = /^`+/.exec(rest)?.[0] ?? "`";
      const end = src.indexOf(run, i + run.length);
      if (end > 0) {
        let code = src.slice(i + run.length, end).replace(/\n/g, " ");
        if (/^ .* $/.test(code)) code = code.slice(1, -1);
        push({ t: "code", v: code });
        i = end + run.length;
        continue;
      }
      text += run;
      i += run.length;
      continue;
    }
    if (depth < 12 && (ch === "*" || ch === "_" || ch === "~")) {
      const em = emphasis(src, i, depth);
      if (em) {
        push(em[0]);
        i = em[1];
        continue;
      }
    }
    if (ch === "[" && depth < 12) {
      const link = linkAt(src, i, depth);
      if (link) {
        push(link[0]);
        i = link[1];
        continue;
      }
    }
    if (ch === "<") {
      const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(rest);
      if (auto) {
        push({ t: "link", href: safeHref(auto[1] ?? ""), c: [{ t: "text", v: auto[1] ?? "" }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((ch === "h" || ch === "H") && /[\s(]$|^$/.test(src.slice(Math.max(0, i - 1), i))) {
      const bare = /^https?:\/\/[^\s<>"]*[^\s<>".,;:!?)'\]]/i.exec(rest);
      if (bare) {
        push({ t: "link", href: safeHref(bare[0]), c: [{ t: "text", v: bare[0] }] });
        i += bare[0].length;
        continue;
      }
    }
    text += ch;
    i++;
  }
  if (text) out.push({ t: "text", v: text });
  return out;
}

/** `**strong**`, `__strong__`, `*em*`, `_em_`, `~~del~~` at `i`: the node and the index after it. */
function emphasis(src: string, i: number, depth: number): [Inline, number] | null {
  const ch = src[i] ?? "";
  const double = src[i + 1] === ch;
  if (ch === "~" && !double) return null;
  const delim = double ? ch + ch : ch;
  const after = src[i + delim.length] ?? "";
  if (!after || /\s/.test(after)) return null;
  // `_` does not open inside a word (snake_case stays as it is).
  if (ch === "_" && /[\p{L}\p{N}]/u.test(src[i - 1] ?? "")) return null;
  let from = i + delim.length + 1;
  for (;;) {
    const end = src.indexOf(delim, from);
    if (end < 0) return null;
    const before = src[end - 1] ?? "";
    const next = src[end + delim.length] ?? "";
    const closes =
      !/\s/.test(before) &&
      // A single `*` next to another `*` belongs to a `**`.
      !(delim.length === 1 && (next === ch || before === ch)) &&
      !(ch === "_" && /[\p{L}\p{N}]/u.test(next));
    if (closes) {
      const inner = parseInline(src.slice(i + delim.length, end), depth + 1);
      const t = ch === "~" ? "del" : double ? "strong" : "em";
      return [{ t, c: inner }, end + delim.length];
    }
    from = end + 1;
  }
}

/** `[text](url "title")` at `i`. */
function linkAt(src: string, i: number, depth: number): [Inline, number] | null {
  let level = 0;
  let close = -1;
  for (let k = i; k < src.length; k++) {
    const c = src[k];
    if (c === "\\") {
      k++;
      continue;
    }
    if (c === "`") {
      const run = /^`+/.exec(src.slice(k))?.[0] ?? "`";
      const end = src.indexOf(run, k + run.length);
      if (end > 0) k = end + run.length - 1;
      continue;
    }
    if (c === "[") level++;
    else if (c === "]" && --level === 0) {
      close = k;
      break;
    }
  }
  if (close < 0 || src[close + 1] !== "(") return null;
  const m = /^\(\s*<?([^\s<>()]*(?:\([^\s()]*\)[^\s<>()]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(src.slice(close + 1));
  if (!m) return null;
  return [{ t: "link", href: safeHref(m[1] ?? ""), c: parseInline(src.slice(i + 1, close), depth + 1) }, close + 1 + m[0].length];
}

/** The link target if it is http(s) or mailto (case and whitespace tricks included), else null. */
export function safeHref(raw: string): string | null {
  // Browsers drop tabs and newlines inside URLs and ignore leading control characters.
  const url = raw.replace(/[\u0000-\u0020]/g, "");
  if (/^(https?:\/\/|mailto:)/i.test(url)) return url;
  return null;
}
