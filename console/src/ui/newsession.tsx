// The new-session form: a provider (the unavailable ones and those with isolation off said so), an
// id and title, a new worktree of a repository, the working directory, model and approval policy.

import { useEffect, useState } from "preact/hooks";
import type { App, ProviderInfo } from "../app.js";
import { showControls } from "../shown.js";
import type { Schemas } from "../../../openapi/clients/typescript/src/client.js";

export function NewSession({ app, onDone }: { app: App; onDone: () => void }) {
  const providers = app.providers;
  // The server's default provider first (what a session without one gets), else the first usable.
  const firstAvailable = (providers.find((p) => p.default && p.available) ?? providers.find((p) => p.available))?.id ?? "";
  const [provider, setProvider] = useState(firstAvailable);
  const [sessionId, setSessionId] = useState("");
  const [title, setTitle] = useState("");
  const [cwd, setCwd] = useState("");
  const [model, setModel] = useState("");
  const [policy, setPolicy] = useState("");
  const [worktree, setWorktree] = useState(false);
  const [repo, setRepo] = useState("");
  const [branch, setBranch] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!provider && firstAvailable) setProvider(firstAvailable);
  }, [firstAvailable]);
  const chosen: ProviderInfo | undefined = providers.find((p) => p.id === provider);
  const val = (set: (v: string) => void) => (e: Event) => set((e.currentTarget as HTMLInputElement).value);
  return (
    <form
      class="new-session"
      data-testid="new-session-form"
      onSubmit={async (ev) => {
        ev.preventDefault();
        if (!app.selectedRoom || busy) return;
        setBusy(true);
        const settings: Schemas["SessionSettings"] = {};
        if (model.trim()) settings.model = model.trim();
        if (policy) settings.approvalPolicy = policy as Schemas["ApprovalPolicy"];
        const body: Schemas["StartSessionRequest"] = { provider: provider || null };
        if (sessionId.trim()) body.sessionId = sessionId.trim();
        if (title.trim()) body.title = title.trim();
        if (cwd.trim()) body.cwd = cwd.trim();
        if (Object.keys(settings).length) body.settings = settings;
        if (worktree) body.workspace = { kind: "worktree", repo: repo.trim(), ...(branch.trim() ? { branch: branch.trim() } : {}) };
        const s = await app.startSession(app.selectedRoom, body);
        setBusy(false);
        if (s) {
          setSessionId("");
          setTitle("");
          onDone();
        }
      }}
    >
      <label>
        Provider
        <select data-testid="provider-select" value={provider} onChange={val(setProvider)}>
          {providers.map((p) => (
            <option value={p.id} disabled={!p.available} title={p.unavailableReason ?? undefined}>
              {showControls(p.displayName)}
              {p.available ? "" : ` — unavailable: ${p.unavailableReason ?? "unknown reason"}`}
              {p.isolation?.warning ? " — isolation off" : ""}
            </option>
          ))}
        </select>
      </label>
      {providers.some((p) => !p.available) ? (
        <ul class="dim unavailable" data-testid="unavailable-providers">
          {providers
            .filter((p) => !p.available)
            .map((p) => (
              <li>
                {showControls(p.displayName)}: {p.unavailableReason ?? "unavailable"}
              </li>
            ))}
        </ul>
      ) : null}
      {providers.some((p) => p.isolation?.warning) ? (
        <ul class="warn isolation-off" data-testid="isolation-warnings">
          {providers
            .filter((p) => p.isolation?.warning)
            .map((p) => (
              <li data-provider={p.id}>
                {showControls(p.displayName)} runs with isolation off: {showControls(p.isolation?.warning ?? "")}
              </li>
            ))}
        </ul>
      ) : null}
      <label>
        Session id <span class="dim">(optional)</span>
        <input value={sessionId} onInput={val(setSessionId)} data-testid="session-id-input" autoComplete="off" />
      </label>
      <label>
        Title <span class="dim">(optional)</span>
        <input value={title} onInput={val(setTitle)} data-testid="title-input" autoComplete="off" />
      </label>
      <label class="check">
        <input type="checkbox" checked={worktree} data-testid="worktree-toggle" onChange={(e) => setWorktree((e.currentTarget as HTMLInputElement).checked)} />
        In a new worktree of…
      </label>
      {worktree ? (
        <>
          <label>
            Repository <span class="dim">(absolute path, inside the workspace roots)</span>
            <input value={repo} onInput={val(setRepo)} data-testid="worktree-repo" placeholder="/absolute/path/to/repo" autoComplete="off" required />
          </label>
          <label>
            Branch <span class="dim">{"(optional; default ensemble/<room>/<session>)"}</span>
            <input value={branch} onInput={val(setBranch)} data-testid="worktree-branch" autoComplete="off" />
          </label>
        </>
      ) : null}
      <label>
        Working directory <span class="dim">{worktree ? "(optional, relative to the worktree)" : "(default: the server's)"}</span>
        <input value={cwd} onInput={val(setCwd)} data-testid="cwd-input" placeholder={worktree ? "relative/path" : "/absolute/path"} autoComplete="off" />
      </label>
      <label>
        Model <span class="dim">(optional)</span>
        <input value={model} onInput={val(setModel)} data-testid="model-input" autoComplete="off" />
      </label>
      <label>
        Approval policy
        <select value={policy} onChange={val(setPolicy)} data-testid="approval-select">
          <option value="">provider default</option>
          <option value="untrusted">untrusted (ask for everything)</option>
          <option value="on-request">on request</option>
          <option value="never">never ask</option>
        </select>
      </label>
      <div class="row">
        <button type="submit" class="primary" data-testid="start-session" disabled={busy || !chosen?.available || (worktree && !repo.trim())}>
          Start session
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
