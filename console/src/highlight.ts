// A small syntax highlighter for code blocks: splits code into tokens (comment, string, number,
// keyword, plain) with rules chosen by the fence's language. Token texts concatenate back to the
// input exactly; rendering makes each a text node inside a <span class="tok-…">.

export type TokenKind = "c" | "s" | "n" | "k" | "p" | "add" | "del" | "meta";
export interface Token {
  k: TokenKind;
  v: string;
}

interface Lang {
  line?: string[];
  block?: [string, string][];
  quotes: string[];
  keywords: Set<string>;
}

const words = (s: string) => new Set(s.split(/\s+/).filter(Boolean));

const C_LIKE = "if else for while do switch case default break continue return try catch finally throw new delete typeof instanceof in of void this super class extends implements interface enum import export from as const let var function static public private protected async await yield null true false undefined";
const LANGS: Record<string, Lang> = {
  js: { line: ["//"], block: [["/*", "*/"]], quotes: ['"', "'", "`"], keywords: words(C_LIKE) },
  ts: { line: ["//"], block: [["/*", "*/"]], quotes: ['"', "'", "`"], keywords: words(`${C_LIKE} type readonly declare namespace keyof satisfies never unknown any string number boolean`) },
  rust: {
    line: ["//"],
    block: [["/*", "*/"]],
    quotes: ['"'],
    keywords: words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err"),
  },
  python: {
    line: ["#"],
    quotes: ['"""', "'''", '"', "'"],
    keywords: words("and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self"),
  },
  go: { line: ["//"], block: [["/*", "*/"]], quotes: ['"', "`"], keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false") },
  c: { line: ["//"], block: [["/*", "*/"]], quotes: ['"', "'"], keywords: words("auto break case char const continue default do double else enum extern float for goto if int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class namespace template typename public private protected virtual bool true false nullptr NULL include define") },
  java: { line: ["//"], block: [["/*", "*/"]], quotes: ['"', "'"], keywords: words(`${C_LIKE} package int long double float boolean char byte short final abstract synchronized throws fun val var when object data`) },
  sh: { line: ["#"], quotes: ['"', "'"], keywords: words("if then else elif fi for while until do done case esac in function return local export set unset echo exit cd source") },
  sql: { line: ["--"], block: [["/*", "*/"]], quotes: ["'", '"'], keywords: words("select from where and or not insert into values update set delete create table index drop alter join left right inner outer on group by order having limit offset as null is in exists union all distinct primary key references SELECT FROM WHERE AND OR NOT INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE INDEX DROP ALTER JOIN ON GROUP BY ORDER LIMIT AS NULL IS IN") },
  yaml: { line: ["#"], quotes: ['"', "'"], keywords: words("true false null yes no on off") },
  json: { quotes: ['"'], keywords: words("true false null") },
  css: { block: [["/*", "*/"]], quotes: ['"', "'"], keywords: words("important") },
};
const ALIASES: Record<string, string> = {
  javascript: "js", jsx: "js", mjs: "js", cjs: "js", typescript: "ts", tsx: "ts", rs: "rust", py: "python",
  golang: "go", cpp: "c", "c++": "c", h: "c", hpp: "c", cs: "java", csharp: "java", kotlin: "java", kt: "java",
  swift: "java", bash: "sh", shell: "sh", zsh: "sh", console: "sh", shellsession: "sh", toml: "yaml", yml: "yaml",
  ini: "yaml", jsonc: "json", json5: "json", scss: "css", less: "css", postgres: "sql", postgresql: "sql", sqlite: "sql",
};
const GENERIC: Lang = { line: ["//", "#"], block: [["/*", "*/"]], quotes: ['"', "'"], keywords: words(C_LIKE) };

/** The tokens of `code` for the fence language `lang` (unknown languages get generic rules). */
export function highlight(code: string, lang: string): Token[] {
  const name = lang.toLowerCase();
  if (name === "diff" || name === "patch") return diffTokens(code);
  const rules = LANGS[ALIASES[name] ?? name] ?? (name === "" || name === "text" || name === "plain" ? null : GENERIC);
  if (!rules) return code ? [{ k: "p", v: code }] : [];
  const out: Token[] = [];
  const add = (k: TokenKind, v: string) => {
    const last = out[out.length - 1];
    if (last && last.k === k) last.v += v;
    else if (v) out.push({ k, v });
  };
  let i = 0;
  outer: while (i < code.length) {
    for (const l of rules.line ?? []) {
      if (code.startsWith(l, i) && (l !== "#" || i === 0 || /[\s;({]/.test(code[i - 1] ?? ""))) {
        const end = code.indexOf("\n", i);
        const stop = end < 0 ? code.length : end;
        add("c", code.slice(i, stop));
        i = stop;
        continue outer;
      }
    }
    for (const [open, close] of rules.block ?? []) {
      if (code.startsWith(open, i)) {
        const end = code.indexOf(close, i + open.length);
        const stop = end < 0 ? code.length : end + close.length;
        add("c", code.slice(i, stop));
        i = stop;
        continue outer;
      }
    }
    for (const q of rules.quotes) {
      if (code.startsWith(q, i)) {
        let k = i + q.length;
        while (k < code.length && !code.startsWith(q, k)) {
          if (code[k] === "\\") k++;
          else if (code[k] === "\n" && q.length === 1 && q !== "`") break;
          k++;
        }
        const stop = Math.min(code.length, code.startsWith(q, k) ? k + q.length : k);
        add("s", code.slice(i, stop));
        i = stop;
        continue outer;
      }
    }
    const rest = code.slice(i, i + 200);
    const num = /^(?:0[xX][\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(rest);
    if (num && !/[\w$]/.test(code[i - 1] ?? "")) {
      add("n", num[0]);
      i += num[0].length;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(rest);
    if (word) {
      add(rules.keywords.has(word[0]) ? "k" : "p", word[0]);
      i += word[0].length;
      continue;
    }
    add("p", code[i] ?? "");
    i++;
  }
  return out;
}

function diffTokens(code: string): Token[] {
  return code.split(/(?<=\n)/).map((line) => ({
    k: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "meta" : "p",
    v: line,
  }));
}
