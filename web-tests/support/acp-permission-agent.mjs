#!/usr/bin/env node
// A minimal ACP v1 agent (newline-delimited JSON-RPC 2.0 on stdin/stdout) that asks for permission the
// way codex-acp does for a command: the tool call's content is the reason followed by
// "Available Decisions: Approved⏎ApprovedExecpolicyAmendment⏎Abort" (codex's own names for what it
// offers), and the options are codex-acp's (two of them reject once). Every prompt runs one such
// request; the selected option is said back as "permission: OPTION_ID", and the turn ends.
// It reports itself as `codex-acp-like` (not `codex-acp`: Ensemble's quirks for the real one stay out).
import { createInterface } from 'node:readline';

const REASON = 'The agent wants to remove the build directory before rebuilding';
const CONTENT = `${REASON}\nAvailable Decisions: Approved\nApprovedExecpolicyAmendment\nAbort`;
const OPTIONS = [
  { optionId: 'approved', name: 'Yes, proceed', kind: 'allow_once' },
  { optionId: 'approved-execpolicy-amendment', name: "Yes, and don't ask again for commands that start with `rm -rf`", kind: 'allow_always' },
  { optionId: 'abort', name: 'No, and tell Codex what to do differently', kind: 'reject_once' },
];

let nextId = 1000;
const waiting = new Map();
let prompt = null;

function send(msg) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
}
const update = (sessionId, u) => send({ method: 'session/update', params: { sessionId, update: u } });
function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

async function runPrompt(id, sessionId) {
  const call = { toolCallId: `call-${id}`, title: 'rm -rf build', kind: 'execute', status: 'pending', rawInput: { command: 'rm -rf build' } };
  update(sessionId, { sessionUpdate: 'tool_call', ...call });
  const answer = await request('session/request_permission', {
    sessionId,
    toolCall: { ...call, content: [{ type: 'content', content: { type: 'text', text: CONTENT } }] },
    options: OPTIONS,
  });
  if (prompt?.id !== id) return;
  const outcome = answer.result?.outcome;
  if (outcome?.outcome === 'selected') {
    const allowed = outcome.optionId.startsWith('approved');
    update(sessionId, { sessionUpdate: 'tool_call_update', toolCallId: call.toolCallId, status: allowed ? 'completed' : 'failed' });
    update(sessionId, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `permission: ${outcome.optionId}` } });
    send({ id, result: { stopReason: 'end_turn' } });
  } else {
    send({ id, result: { stopReason: 'cancelled' } });
  }
  prompt = null;
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.method === undefined) {
    // An answer to one of our requests.
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
    return;
  }
  switch (msg.method) {
    case 'initialize':
      send({ id: msg.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'codex-acp-like', version: '0.0.1' } } });
      break;
    case 'session/new':
      send({ id: msg.id, result: { sessionId: `sess-${process.pid}-${nextId++}` } });
      break;
    case 'session/prompt':
      prompt = { id: msg.id };
      void runPrompt(msg.id, msg.params.sessionId);
      break;
    case 'session/cancel':
      if (prompt) send({ id: prompt.id, result: { stopReason: 'cancelled' } });
      prompt = null;
      break;
    default:
      if (msg.id !== undefined) send({ id: msg.id, error: { code: -32601, message: `method not found: ${msg.method}` } });
  }
});
process.stdin.on('end', () => process.exit(0));
