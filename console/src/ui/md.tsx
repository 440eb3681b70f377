// Renders the Markdown tree (`../markdown.ts`) and highlighted code as Preact elements. Every string
// becomes a text node; the only attribute taken from a message is a link's href, and only when
// `safeHref` allowed it.

import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { highlight } from "../highlight.js";
import { parseMarkdown, type Block, type Inline } from "../markdown.js";

export function Markdown({ text, class: cls }: { text: string; class?: string }) {
  return <div class={`md${cls ? ` ${cls}` : ""}`}>{blocks(parseMarkdown(text))}</div>;
}

export function Code({ code, lang }: { code: string; lang: string }) {
  return (
    <code class={lang ? `lang-${lang.replace(/[^a-z0-9+#-]/g, "")}` : undefined}>
      {highlight(code, lang).map((t) => (t.k === "p" ? t.v : <span class={`tok-${t.k}`}>{t.v}</span>))}
    </code>
  );
}

/** Copies a code block's text (the Clipboard API: the page is a secure context, 127.0.0.1 or https). */
function CopyButton({ text }: { text: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 2000);
    return () => clearTimeout(t);
  }, [state]);
  const copy = async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <button type="button" class="link copy" data-testid="copy-code" data-state={state} title="Copy the code to the clipboard" onClick={() => void copy()}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy failed" : "Copy"}
    </button>
  );
}

function blocks(list: Block[]): ComponentChildren[] {
  return list.map((b) => block(b));
}

function block(b: Block): ComponentChildren {
  switch (b.t) {
    case "p":
      return <p>{inlines(b.c)}</p>;
    case "h": {
      // Headings inside a message are styled, not document headings (they would break the outline).
      return (
        <p class={`md-h md-h${b.level}`} role="heading" aria-level={Math.min(6, b.level + 2)}>
          {inlines(b.c)}
        </p>
      );
    }
    case "code":
      return (
        <figure class="codeblock">
          <figcaption>
            <span>{b.lang}</span>
            <CopyButton text={b.v} />
          </figcaption>
          <pre>
            <Code code={b.v} lang={b.lang} />
          </pre>
        </figure>
      );
    case "list": {
      const items = b.items.map((it) => (
        <li class={it.task === null ? undefined : "task"}>
          {it.task === null ? null : <input type="checkbox" checked={it.task} disabled aria-label={it.task ? "done" : "not done"} />}
          {it.c.length === 1 && it.c[0]?.t === "p" ? inlines(it.c[0].c) : blocks(it.c)}
        </li>
      ));
      return b.ordered ? <ol start={b.start === 1 ? undefined : b.start}>{items}</ol> : <ul>{items}</ul>;
    }
    case "quote":
      return <blockquote>{blocks(b.c)}</blockquote>;
    case "hr":
      return <hr />;
    case "table":
      return (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                {b.head.map((h, i) => (
                  <th class={b.align[i] ? `al-${b.align[i]}` : undefined}>{inlines(h)}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {b.rows.map((r) => (
                <tr>
                  {r.map((c, i) => (
                    <td class={b.align[i] ? `al-${b.align[i]}` : undefined}>{inlines(c)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
  }
}

function inlines(list: Inline[]): ComponentChildren[] {
  return list.map((n) => inline(n));
}

function inline(n: Inline): ComponentChildren {
  switch (n.t) {
    case "text":
      return n.v;
    case "code":
      return <code>{n.v}</code>;
    case "strong":
      return <strong>{inlines(n.c)}</strong>;
    case "em":
      return <em>{inlines(n.c)}</em>;
    case "del":
      return <del>{inlines(n.c)}</del>;
    case "br":
      return <br />;
    case "link":
      return n.href ? (
        <a href={n.href} target="_blank" rel="noopener noreferrer nofollow">
          {inlines(n.c)}
        </a>
      ) : (
        <span class="link-refused" title="link target not shown (only http, https and mailto links are)">
          {inlines(n.c)}
        </span>
      );
  }
}
