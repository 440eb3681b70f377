// The message box of a session or a side conversation: text and images (attached, pasted or
// dropped), Send, Steer, Queue and Cancel turn, and the session's queue under it; for a token that
// may only watch, the note saying so instead.

import { useEffect, useRef, useState } from "preact/hooks";
import type { App } from "../app.js";
import type { SessionState } from "../model.js";
import { IMAGE_ACCEPT, imageName, isImageType, refuseImage, toBase64, turnInput, type OutgoingImage } from "../attach.js";
import { PendingImages, type PendingImage } from "./attachments.js";
import { QueuePanel } from "./queue.js";
import { composerKey, primaryAction, type SubmitHow } from "../queue.js";

/** Where the composer would be, for a token that may only watch. */
export function ReadOnlyNote({ app }: { app: App }) {
  return (
    <p class="dim read-only" data-testid="read-only" role="note">
      {app.revoked ? "This token no longer works: what is shown stays, nothing more comes." : `Watching only: this token's role is ${app.role ?? "not known yet"}, which may not send to the agent.`}
    </p>
  );
}

/**
 * The message box. `queueable` (a session, not a side conversation): while a turn runs, what is typed
 * can be queued as a follow-up (the Queue button, Alt+Enter; Ctrl+Enter where the agent cannot
 * steer), and the session's queue is shown under it.
 */
export function Composer({ app, st, steerable, queueable }: { app: App; st: SessionState; steerable: boolean; queueable: boolean }) {
  const [text, setText] = useState("");
  // The `/` menu: the agent's commands matching what is typed after a leading `/`.
  const [pick, setPick] = useState(0);
  const [menuClosed, setMenuClosed] = useState(false);
  const typed = /^\/([^\s]*)$/.exec(text);
  const matches = typed && !menuClosed ? st.commands.filter((c) => c.name.toLowerCase().startsWith(typed[1]!.toLowerCase())).slice(0, 12) : [];
  const menu = matches.length > 0;
  const choose = (name: string) => {
    setText(`/${name} `);
    setMenuClosed(true);
  };
  const [busy, setBusy] = useState(false);
  const [images, setImages] = useState<PendingImage[]>([]);
  /** Why an image was not taken or not sent (shown beside the images). */
  const [imageError, setImageError] = useState<string | null>(null);
  /** Why a follow-up was not queued, or a change of the queue refused (`queue_full`, …). */
  const [queueError, setQueueError] = useState<string | null>(null);
  /** Why a turn was not sent: the session's or the room's budget is reached (409 `budget_exhausted`). */
  const [budgetError, setBudgetError] = useState<string | null>(null);
  const [dropping, setDropping] = useState(false);
  const dragDepth = useRef(0);
  const nextImage = useRef(0);
  const fileInput = useRef<HTMLInputElement>(null);
  // The thumbnails' blob: URLs go with the composer.
  const shown = useRef<PendingImage[]>([]);
  shown.current = images;
  useEffect(() => () => shown.current.forEach((i) => URL.revokeObjectURL(i.url)), []);
  const running = st.activeTurnId !== null || st.status === "working" || st.status === "waiting";
  /** Queue is offered while a turn runs, or while follow-ups wait (after a restart, before one is sent). */
  const offerQueue = queueable && (running || st.queue.length > 0);
  const modes = { running, steerable, queueable };
  const primary = primaryAction(modes);
  const id = `composer-${st.id}`;
  const sendable = text.trim() !== "" || images.length > 0;
  /** Takes the image files among `files`; the others are refused, each with its reason. */
  const attach = (files: File[]) => {
    if (!files.length) return;
    const refused: string[] = [];
    const taken: PendingImage[] = [];
    for (const f of files) {
      const why = refuseImage(f);
      if (why || !isImageType(f.type)) {
        refused.push(why ?? "");
        continue;
      }
      const n = ++nextImage.current;
      taken.push({ id: n, file: f, name: imageName(f, n), mimeType: f.type, size: f.size, url: URL.createObjectURL(f) });
    }
    setImageError(refused.length ? refused.join(" ") : null);
    if (taken.length) setImages((list) => [...list, ...taken]);
  };
  const remove = (imageId: number) => {
    const gone = images.find((i) => i.id === imageId);
    if (gone) URL.revokeObjectURL(gone.url);
    setImages(images.filter((i) => i.id !== imageId));
  };
  const submit = async (how: SubmitHow) => {
    if (!sendable || busy) return;
    setBusy(true);
    const sent = images;
    let outgoing: OutgoingImage[];
    try {
      outgoing = await Promise.all(sent.map(async (i) => ({ name: i.name, mimeType: i.mimeType, data: toBase64(new Uint8Array(await i.file.arrayBuffer())) })));
    } catch (e) {
      setBusy(false);
      setImageError(`An image could not be read: ${(e as Error).message}`);
      return;
    }
    const sentText = text;
    const r = await app.submit(st.id, turnInput(sentText, outgoing), how);
    setBusy(false);
    if (r.ok) {
      // What was typed while it was being sent stays for the next one.
      setText((now) => (now === sentText ? "" : now));
      sent.forEach((i) => URL.revokeObjectURL(i.url));
      setImages((list) => list.filter((i) => !sent.includes(i)));
      setImageError(null);
      setQueueError(null);
      setBudgetError(null);
    } else if (r.attachmentError) {
      setImageError(r.attachmentError);
    } else if (r.queueError) {
      setQueueError(r.queueError);
    } else if (r.budgetError) {
      setBudgetError(r.budgetError);
    }
  };
  const hasFiles = (dt: DataTransfer | null) => !!dt && [...dt.types].includes("Files");
  const placeholder = running
    ? steerable
      ? `A turn is running: Ctrl+Enter steers it${queueable ? ", Alt+Enter queues a follow-up" : ""}`
      : queueable
        ? "A turn is running: Ctrl+Enter queues a follow-up for after it"
        : "A turn is running"
    : st.session.live
      ? "Message (Ctrl+Enter sends; paste or drop images)"
      : "Message (sending resumes the session; Ctrl+Enter sends)";
  return (
    <>
      <form
        class={`composer${dropping ? " dropping" : ""}`}
        data-testid="composer-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          void submit(primary);
        }}
        onDragEnter={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          dragDepth.current++;
          setDropping(true);
        }}
        onDragOver={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          if (ev.dataTransfer) ev.dataTransfer.dropEffect = "copy";
        }}
        onDragLeave={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          dragDepth.current = Math.max(0, dragDepth.current - 1);
          if (!dragDepth.current) setDropping(false);
        }}
        onDrop={(ev) => {
          if (!hasFiles(ev.dataTransfer)) return;
          ev.preventDefault();
          dragDepth.current = 0;
          setDropping(false);
          attach([...(ev.dataTransfer?.files ?? [])]);
        }}
      >
        <label for={id} class="sr-only">
          Message to {st.isSide ? "the side conversation" : "the agent"}
        </label>
        <textarea
          id={id}
          data-testid="composer"
          placeholder={placeholder}
          value={text}
          aria-autocomplete="list"
          aria-controls={menu ? `${id}-commands` : undefined}
          aria-activedescendant={menu ? `${id}-command-${Math.min(pick, matches.length - 1)}` : undefined}
          onInput={(e) => {
            setText((e.currentTarget as HTMLTextAreaElement).value);
            setPick(0);
            setMenuClosed(false);
          }}
          onPaste={(e) => {
            // A pasted image (a screenshot) is attached; pasted text stays text (a spreadsheet's
            // cells come with a picture of them too).
            const cd = e.clipboardData;
            if (!cd || cd.getData("text/plain")) return;
            const files = cd.files.length ? [...cd.files] : [...cd.items].filter((i) => i.kind === "file").map((i) => i.getAsFile()).filter((f): f is File => f !== null);
            if (!files.length) return;
            e.preventDefault();
            attach(files);
          }}
          onKeyDown={(e) => {
            if (menu) {
              const at = Math.min(pick, matches.length - 1);
              if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                e.preventDefault();
                setPick((at + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length);
                return;
              }
              if ((e.key === "Enter" && !e.ctrlKey && !e.metaKey && !e.altKey && !e.shiftKey) || e.key === "Tab") {
                e.preventDefault();
                choose(matches[at]!.name);
                return;
              }
              if (e.key === "Escape") {
                e.preventDefault();
                setMenuClosed(true);
                return;
              }
            }
            const how = composerKey(e, modes);
            if (how) {
              e.preventDefault();
              void submit(how);
            }
          }}
        />
        {menu ? (
          <ul class="command-menu" role="listbox" id={`${id}-commands`} data-testid="command-menu" aria-label="The agent's commands">
            {matches.map((c, i) => (
              <li
                key={c.name}
                id={`${id}-command-${i}`}
                role="option"
                aria-selected={i === Math.min(pick, matches.length - 1)}
                data-testid="command-option"
                data-command={c.name}
                onMouseDown={(e) => {
                  // Before the textarea loses the focus.
                  e.preventDefault();
                  choose(c.name);
                }}
              >
                <code>/{c.name}</code>
                {c.inputHint ? <span class="dim"> {c.inputHint}</span> : null} <span class="dim">— {c.description}</span>
              </li>
            ))}
          </ul>
        ) : null}
        <PendingImages images={images} onRemove={remove} />
        {imageError ? (
          <p class="warn attach-error" role="alert" data-testid="attach-error">
            {imageError}
          </p>
        ) : null}
        {queueError ? (
          <p class="warn queue-error" role="alert" data-testid="queue-error">
            {queueError}
            <button type="button" class="link" aria-label="Dismiss this message" onClick={() => setQueueError(null)}>
              ×
            </button>
          </p>
        ) : null}
        {budgetError ? (
          <p class="warn queue-error" role="alert" data-testid="submit-error" data-code="budget_exhausted">
            {budgetError}
            <button type="button" class="link" aria-label="Dismiss this message" onClick={() => setBudgetError(null)}>
              ×
            </button>
          </p>
        ) : null}
        <div class="row">
          {running && primary === "steer" ? (
            <button type="submit" class="primary" data-testid="steer" disabled={busy || !sendable} title="Add this to the running turn (Ctrl+Enter)">
              Steer
            </button>
          ) : null}
          {offerQueue ? (
            <button
              type={primary === "queue" ? "submit" : "button"}
              class={primary === "queue" ? "primary" : undefined}
              data-testid="queue-turn"
              disabled={busy || !sendable}
              title={`Queue this as a follow-up: it starts when the turns before it have ended (${primary === "queue" ? "Ctrl+Enter or Alt+Enter" : "Alt+Enter"})`}
              onClick={primary === "queue" ? undefined : () => void submit("queue")}
            >
              Queue
            </button>
          ) : null}
          {running ? (
            <button type="button" class="danger" data-testid="cancel" onClick={() => void app.cancel(st.id)}>
              Cancel turn
            </button>
          ) : null}
          {!running ? (
            <button type="submit" class="primary" data-testid="send" disabled={busy || !sendable}>
              Send
            </button>
          ) : null}
          <button type="button" data-testid="attach-image" title="Attach a PNG, JPEG, GIF or WebP image (at most 5 MiB); you can also paste or drop one here" onClick={() => fileInput.current?.click()}>
            Attach image
          </button>
          <input
            type="file"
            ref={fileInput}
            hidden
            tabIndex={-1}
            multiple
            accept={IMAGE_ACCEPT}
            aria-label="Attach image"
            data-testid="attach-input"
            onChange={(e) => {
              const el = e.currentTarget as HTMLInputElement;
              attach([...(el.files ?? [])]);
              el.value = "";
            }}
          />
          <span class="dim hint">{running && queueable && primary === "steer" ? "Ctrl+Enter steers · Alt+Enter queues" : primary === "queue" ? "Ctrl+Enter queues" : "Ctrl+Enter"}</span>
        </div>
      </form>
      {queueable ? <QueuePanel app={app} st={st} canAct steerable={steerable} running={running} onError={setQueueError} /> : null}
    </>
  );
}
