// A small confirmation ("Close for good?", "Restore the files?"): the focus moves to the safe
// choice; Escape (anywhere on the page) takes it too.

import { useEffect, useRef } from "preact/hooks";

export function Confirm(props: {
  question: string;
  label: string;
  confirmText: string;
  keepText: string;
  testid: string;
  confirmTestid: string;
  keepTestid: string;
  onConfirm: () => void;
  onKeep: () => void;
}) {
  const keep = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    keep.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        props.onKeep();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  return (
    <span class="confirm" role="group" aria-label={props.label} data-testid={props.testid}>
      {props.question}
      <button type="button" class="danger" data-testid={props.confirmTestid} onClick={props.onConfirm}>
        {props.confirmText}
      </button>
      <button type="button" data-testid={props.keepTestid} ref={keep} onClick={props.onKeep} title={`${props.keepText} (Escape)`}>
        {props.keepText}
      </button>
    </span>
  );
}
