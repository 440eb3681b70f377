// Images in the console: the composer's pending images (pasted, dropped or picked; thumbnails with
// a remove button), and a turn's images and files in the transcript. A turn's image is read from
// `…/attachments/{attachment}` with the token (an <img> cannot send it) and shown from a blob: URL,
// revoked when the thumbnail goes; clicking it opens the whole image in a dialog.

import { useEffect, useRef, useState } from "preact/hooks";
import { fileChipText, formatBytes, imageCaption, imageLabel, type FileRef, type ImageRef, type ImageType } from "../attach.js";
import { showControls } from "../text.js";

/** An image the composer will send: the file, and a blob: URL of it for its thumbnail. */
export interface PendingImage {
  id: number;
  file: Blob;
  name: string;
  mimeType: ImageType;
  size: number;
  url: string;
}

/** The composer's images before sending: thumbnails, each with ×. */
export function PendingImages({ images, onRemove }: { images: PendingImage[]; onRemove: (id: number) => void }) {
  if (!images.length) return null;
  return (
    <ul class="attachments pending" data-testid="pending-attachments" aria-label="Images to send">
      {images.map((i) => (
        <li class="thumb" key={i.id} data-testid="pending-attachment" data-name={i.name} title={`${i.name} · ${formatBytes(i.size)}`}>
          <img class="thumb-img" src={i.url} alt={showControls(i.name)} data-testid="pending-attachment-img" />
          <span class="thumb-caption dim">{showControls(i.name)}</span>
          <button type="button" class="thumb-remove" data-testid="remove-attachment" aria-label={`Remove ${showControls(i.name)}`} title="Remove" onClick={() => onRemove(i.id)}>
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}

/** A turn's (or a steer's) images as thumbnails and files as chips. */
export function TurnAttachments({ images, files, load }: { images: ImageRef[]; files: FileRef[]; load: ((attachment: string) => Promise<Blob>) | null }) {
  if (!images.length && !files.length) return null;
  return (
    <>
      {images.length ? (
        <ul class="attachments" data-testid="turn-images" aria-label="Images">
          {images.map((i, n) => (
            <TurnImage image={i} load={load} key={i.attachment ?? `image-${n}`} />
          ))}
        </ul>
      ) : null}
      {files.length ? (
        <ul class="attachments files" data-testid="turn-files" aria-label="Files">
          {files.map((f) => (
            <li class="chip file-chip" data-testid="turn-file" data-path={f.path} data-bytes={f.bytes ?? undefined} title={f.mimeType ?? undefined}>
              <span aria-hidden="true">📄 </span>
              {showControls(fileChipText(f))}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

function TurnImage({ image, load }: { image: ImageRef; load: ((attachment: string) => Promise<Blob>) | null }) {
  const [url, setUrl] = useState<string | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const id = image.attachment;
  useEffect(() => {
    if (!id || !load) return;
    let gone = false;
    let made: string | null = null;
    load(id).then(
      (blob) => {
        if (gone) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      },
      (e: Error) => !gone && setFailed(e.message),
    );
    return () => {
      gone = true;
      if (made) URL.revokeObjectURL(made);
    };
  }, [id, load]);
  const label = showControls(imageLabel(image));
  return (
    <li class="thumb" data-testid="turn-image" data-attachment={id ?? undefined} data-name={image.name ?? undefined} data-state={url ? "loaded" : failed ? "failed" : "loading"} title={failed ? `not shown: ${failed}` : showControls(imageCaption(image))}>
      {url ? (
        <button type="button" class="thumb-open" data-testid="open-image" aria-label={`Open image ${label}`} aria-haspopup="dialog" ref={button} onClick={() => setOpen(true)}>
          <img class="thumb-img" src={url} alt={label} data-testid="turn-image-img" />
        </button>
      ) : (
        <span class="thumb-missing dim" role="img" aria-label={`${label} (${failed ? "not available" : "loading"})`}>
          {failed ? "image not available" : "loading…"}
        </span>
      )}
      <span class="thumb-caption dim">{showControls(imageCaption(image))}</span>
      {open && url ? (
        <ImageDialog
          url={url}
          image={image}
          onClose={() => {
            setOpen(false);
            setTimeout(() => button.current?.focus(), 0);
          }}
        />
      ) : null}
    </li>
  );
}

/** The whole image (modal; Escape or Close ends it), with a link to save it. */
function ImageDialog({ url, image, onClose }: { url: string; image: ImageRef; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
    return () => {
      if (d?.open) d.close();
    };
  }, []);
  const label = showControls(imageLabel(image));
  return (
    <dialog ref={dialog} class="image-dialog" data-testid="image-dialog" aria-label={`Image ${label}`} onClose={onClose}>
      <div class="row spread">
        <span class="dim">{showControls(imageCaption(image))}</span>
        <span class="row">
          <a href={url} download={imageLabel(image).replace(/^.*[\\/]/, "")} data-testid="image-save">
            Save image
          </a>
          <button type="button" data-testid="image-dialog-close" title="Close (Escape)" onClick={onClose}>
            Close
          </button>
        </span>
      </div>
      <img src={url} alt={label} data-testid="image-dialog-img" />
    </dialog>
  );
}
