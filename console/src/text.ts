// Text from agents and clients shown as it is, except what would hide how it reads: Unicode's
// bidirectional controls (a right-to-left override makes `txt.exe` of `exe.txt`, "Trojan Source")
// are shown as visible marks in titles, file names and options instead of acting on them.

/** Embeddings, overrides, isolates and the directional marks. */
const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

/** `s` with every bidirectional control replaced by a visible `⟦U+XXXX⟧`. */
export function showControls(s: string): string {
  return s.replace(BIDI_CONTROLS, (c) => `⟦U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}
