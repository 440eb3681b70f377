// Test support: the real `ensemble` binary on 127.0.0.1:0, a frame collector that waits on frames
// (never on time), and small helpers around openapi-fetch results.

import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";

import {
  createEnsembleClient,
  type EnsembleClient,
  type Event,
  type EventOf,
  type EventType,
  RoomStream,
  type RoomFrame,
  type RoomStreamOptions,
  type WebSocketConstructor,
} from "../src/index.js";
import { OpenApiChecker } from "./openapi-check.js";

/** The package directory (this file runs from dist-test/test/). */
const packageDir = fileURLToPath(new URL("../../", import.meta.url));
export const ensembleBin = process.env.ENSEMBLE_BIN
  ? resolve(process.env.ENSEMBLE_BIN)
  : resolve(packageDir, "../../../target/debug/ensemble");

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function randomToken(length = 48): string {
  return Array.from(randomBytes(length), (b) => ALNUM[b % ALNUM.length]).join("");
}

export interface Server {
  baseUrl: string;
  token: string;
  /** The workspace root and default cwd of sessions. */
  workDir: string;
  /** The typed client; every response is also checked against the server's OpenAPI document. */
  client: EnsembleClient;
  checker: OpenApiChecker;
  /**
   * A RoomStream on this server using Node's `ws`; `sockets` records every socket it opened, and
   * `socketCount(n)` resolves once it has opened `n` (rejects after `timeoutMs`).
   */
  roomStream(
    roomId: string,
    options?: Partial<RoomStreamOptions>,
  ): { stream: RoomStream; sockets: WebSocket[]; socketCount(n: number, timeoutMs?: number): Promise<void> };
  /** Sends the server process a signal (SIGSTOP/SIGCONT to freeze it). */
  signal(signal: NodeJS.Signals): void;
  /** The server's stderr so far (for failure messages). */
  stderr(): string;
  stop(): Promise<void>;
}

/**
 * Starts `ensemble` on 127.0.0.1:0 with a temporary data dir, token file and workspace, and waits for
 * its first stdout line (`listening on http://ADDR`).
 */
export async function startServer(extraArgs: string[] = []): Promise<Server> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "ensemble-ts-")));
  const dataDir = join(dir, "data");
  const workDir = join(dir, "work");
  mkdirSync(dataDir);
  mkdirSync(workDir);
  const token = randomToken();
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, token, { mode: 0o600 });
  chmodSync(tokenFile, 0o600);

  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("ENSEMBLE_")) env[k] = v;
  const args = [
    "--listen", "127.0.0.1:0",
    "--data-dir", dataDir,
    "--token-file", tokenFile,
    "--workspace-roots", workDir,
    "--default-cwd", workDir,
    "--scripted-chunk-delay-ms", "2",
    ...extraArgs,
  ];
  const child = spawn(ensembleBin, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-64 * 1024);
  });
  const exited = new Promise<void>((res) => child.once("exit", () => res()));
  const cleanup = () => {
    process.removeListener("exit", killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };

  let baseUrl: string;
  try {
    baseUrl = await firstLine(child, 20_000);
  } catch (e) {
    child.kill("SIGKILL");
    await exited;
    cleanup();
    throw new Error(`${ensembleBin} did not start: ${(e as Error).message}\n${stderr}`);
  }

  const checker = new OpenApiChecker();
  const client = createEnsembleClient({ baseUrl, token });
  const document = await client.GET("/openapi.json");
  if (!document.data) throw new Error(`GET /openapi.json: HTTP ${document.response.status}`);
  checker.load(document.data);
  client.use(checker.middleware());

  let stopped: Promise<void> | undefined;
  return {
    baseUrl,
    token,
    workDir,
    client,
    checker,
    roomStream(roomId, options = {}) {
      const sockets: WebSocket[] = [];
      const waiting: { n: number; resolve: () => void }[] = [];
      class RecordingWebSocket extends WebSocket {
        constructor(url: string, protocols: string[]) {
          super(url, protocols);
          sockets.push(this);
          for (const w of waiting.filter((w) => sockets.length >= w.n)) w.resolve();
        }
      }
      const socketCount = (n: number, timeoutMs = 10_000) =>
        new Promise<void>((res, rej) => {
          if (sockets.length >= n) return res();
          const timer = setTimeout(() => rej(new Error(`timed out after ${timeoutMs} ms waiting for socket #${n}`)), timeoutMs);
          waiting.push({
            n,
            resolve: () => {
              clearTimeout(timer);
              res();
            },
          });
        });
      const stream = new RoomStream({
        baseUrl,
        token,
        roomId,
        WebSocket: RecordingWebSocket satisfies WebSocketConstructor,
        ...options,
      });
      return { stream, sockets, socketCount };
    },
    signal: (signal) => {
      child.kill(signal);
    },
    stderr: () => stderr,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill("SIGCONT");
          child.kill("SIGTERM");
          const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
          await exited;
          clearTimeout(timer);
        }
        cleanup();
      })();
      return stopped;
    },
  };
}

function firstLine(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((res, rej) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => fail(new Error(`no "listening on" line within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null) => fail(new Error(`exited with ${code} before listening`));
    function fail(e: Error) {
      clearTimeout(timer);
      lines.close();
      rej(e);
    }
    child.once("exit", onExit);
    lines.once("line", (line) => {
      clearTimeout(timer);
      child.removeListener("exit", onExit);
      // Keep draining stdout so the server never blocks on a full pipe.
      lines.on("line", () => {});
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line.trim());
      if (m?.[1]) res(m[1]);
      else rej(new Error(`unexpected first line: ${line}`));
    });
  });
}

/** Reads a RoomStream in the background; tests wait for frames matching a predicate, with a timeout. */
export class Collector {
  readonly frames: RoomFrame[] = [];
  error: unknown;
  ended = false;
  private watchers = new Set<{ test: (f: RoomFrame) => boolean; resolve: (f: RoomFrame) => void; reject: (e: unknown) => void }>();
  readonly finished: Promise<void>;

  constructor(readonly stream: RoomStream) {
    this.finished = this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for await (const frame of this.stream) {
        this.frames.push(frame);
        for (const w of this.watchers) if (w.test(frame)) w.resolve(frame);
      }
    } catch (e) {
      this.error = e;
    } finally {
      this.ended = true;
      for (const w of this.watchers) w.reject(this.error ?? new Error("the stream ended"));
    }
  }

  /** The first frame (already received or future) that satisfies `test`. */
  waitFor<T extends RoomFrame>(what: string, test: (f: RoomFrame) => f is T, timeoutMs?: number): Promise<T>;
  waitFor(what: string, test: (f: RoomFrame) => boolean, timeoutMs?: number): Promise<RoomFrame>;
  waitFor(what: string, test: (f: RoomFrame) => boolean, timeoutMs = 10_000): Promise<RoomFrame> {
    const seen = this.frames.find(test);
    if (seen) return Promise.resolve(seen);
    if (this.ended) return Promise.reject(new Error(`waiting for ${what}: the stream ended (${String(this.error)})`));
    return new Promise((res, rej) => {
      const w = {
        test,
        resolve: (f: RoomFrame) => {
          done();
          res(f);
        },
        reject: (e: unknown) => {
          done();
          rej(new Error(`waiting for ${what}: ${String(e)}`));
        },
      };
      const timer = setTimeout(() => {
        done();
        const tail = this.frames.slice(-5).map((f) => (f.type === "event" || f.type === "side_event" ? `${f.type}:${f.event.type}` : f.type));
        rej(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last frames: ${tail.join(", ")}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.watchers.delete(w);
      };
      this.watchers.add(w);
    });
  }

  /** The first room event of `type` (and matching `test`). */
  async event<T extends EventType>(type: T, test: (e: EventOf<T>) => boolean = () => true, timeoutMs?: number): Promise<EventOf<T>> {
    const f = await this.waitFor(`event ${type}`, (f) => f.type === "event" && isType(f.event, type) && test(f.event), timeoutMs);
    return (f as { event: Event }).event as EventOf<T>;
  }

  /** The first side-conversation event of `type` (and matching `test`). */
  async sideEvent<T extends EventType>(type: T, test: (e: EventOf<T>) => boolean = () => true, timeoutMs?: number): Promise<EventOf<T>> {
    const f = await this.waitFor(`side event ${type}`, (f) => f.type === "side_event" && isType(f.event, type) && test(f.event), timeoutMs);
    return (f as { event: Event }).event as EventOf<T>;
  }

  /** The durable events received so far, in order. */
  events(): Event[] {
    return this.frames.flatMap((f) => (f.type === "event" ? [f.event] : []));
  }

  sideEvents(sessionId?: string): Event[] {
    return this.frames.flatMap((f) => (f.type === "side_event" && (!sessionId || f.event.sessionId === sessionId) ? [f.event] : []));
  }
}

export function isType<T extends EventType>(e: Event, type: T): e is EventOf<T> {
  return e.type === type;
}

/** The body of a successful openapi-fetch call, or a descriptive throw. */
export function ok<D>(r: { data?: D; error?: unknown; response: Response }, what: string): D {
  if (!r.response.ok || r.data === undefined) {
    throw new Error(`${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
  }
  return r.data;
}

/** Asserts a 204 answer. */
export function noContent(r: { error?: unknown; response: Response }, what: string): void {
  if (r.response.status !== 204) throw new Error(`${what}: HTTP ${r.response.status} ${JSON.stringify(r.error)}`);
}

/** A room id unique to this run. */
export function roomId(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString("hex")}`;
}

/** The text a turn's message deltas add up to, per item. */
export function messageText(events: Event[], turnId: string): string {
  return events
    .filter((e): e is EventOf<"message.delta"> => e.type === "message.delta" && e.turnId === turnId)
    .map((e) => e.payload.text)
    .join("");
}
