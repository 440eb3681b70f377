// The console's transcript: every kind of event as a person reads it — messages as sanitised
// Markdown (code blocks highlighted) streaming in as they arrive, reasoning collapsed, command calls
// with their output in a terminal block, file changes as a unified diff, plans as a checklist, usage,
// notices and errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { send, sessionStatus, shots, startSession, texts, tid, useConsole } from '../support/console.mjs';

const h = useConsole();
const view = tid('session-view');

test('a reply streams in word by word, as Markdown, sanitised', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'md' });
  await startSession(page, 's1');
  // Record every state of the agent's message while it streams.
  await page.evaluate(() => {
    window.seen = [];
    const box = document.querySelector('[data-testid="transcript"]');
    new MutationObserver(() => {
      const m = box.querySelector('[data-testid="message"]');
      if (m && m.textContent !== window.seen.at(-1)) window.seen.push(m.textContent);
    }).observe(box, { childList: true, subtree: true, characterData: true });
  });
  const words = 'hello from the browser console, one word at a time';
  await send(page, `/slow 30\n${words}`);
  const first = `${view} ${tid('message')}[data-done="true"]`;
  await page.waitForSelector(first);
  const expected = `AgentYou said: ${words}`;
  assert.equal(await page.textContent(first), expected);
  const seen = await page.evaluate(() => window.seen);
  assert.ok(seen.length >= 5, `the reply did not stream (states seen: ${JSON.stringify(seen)})`);
  for (const s of seen) assert.ok(expected.startsWith(s), `${JSON.stringify(s)} is not a prefix of the reply`);
  assert.equal(seen.at(-1), expected);
  await sessionStatus(page, 's1', 'ready');

  const line =
    'this is **bold**, *em* and `code`, [docs](https://example.com/docs) [bad](javascript:window.pwned=1) <img src=x onerror="window.pwned=1"> <b>raw</b>';
  await send(page, line);
  const msg = `${view} ${tid('message')}[data-done="true"] >> nth=1`;
  await page.waitForSelector(msg);
  const final = await page.textContent(`${msg} >> .md`);
  // Markdown: strong, em, inline code, an http link; the javascript: link is no link; HTML is text.
  const el = await page.$(msg);
  assert.equal(await el.$eval('strong', (e) => e.textContent), 'bold');
  assert.equal(await el.$eval('em', (e) => e.textContent), 'em');
  assert.equal(await el.$eval('code', (e) => e.textContent), 'code');
  const links = await el.$$eval('a', (as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.rel]));
  assert.deepEqual(links, [['docs', 'https://example.com/docs', 'noopener noreferrer nofollow']]);
  assert.equal(await el.$$eval('img, b', (x) => x.length), 0);
  assert.match(final, /<img src=x onerror="window.pwned=1"> <b>raw<\/b>/);
  assert.equal(await page.evaluate(() => window.pwned), undefined);

  // The person's own message is Markdown too: a fenced code block, highlighted.
  await send(page, '```ts\nconst answer = 42; // the answer\n```');
  const code = `${view} ${tid('user-message')} .codeblock code.lang-ts`;
  await page.waitForSelector(code);
  assert.equal(await page.textContent(code), 'const answer = 42; // the answer');
  assert.equal(await page.textContent(`${code} .tok-k`), 'const');
  assert.equal(await page.textContent(`${code} .tok-n`), '42');
  assert.equal(await page.textContent(`${code} .tok-c`), '// the answer');
  await sessionStatus(page, 's1', 'ready');
  await shots(page, '05-markdown');
  page.assertClean();
});

test('reasoning, a tool, a file change with its diff, a command with output, a plan, usage, errors and notices', { timeout: 30_000 }, async () => {
  const page = await h.open({ room: 'items' });
  await startSession(page, 's1');
  await send(
    page,
    [
      '/reason Weighing **two** options',
      '/tool grep -n TODO',
      '/edit src/hello.rs fn main() {\\n    println!("hi");\\n}',
      '/run echo from-the-console',
      '/plan Read the code; Fix the bug; Run the tests',
      'all done',
    ].join('\n'),
  );
  // The command waits for approval; accept it inline.
  await page.click(`${view} ${tid('decision-accept')}`);
  await sessionStatus(page, 's1', 'ready');

  // Reasoning: collapsed, its first line in the summary; opening it shows the Markdown.
  const reasoning = `${view} ${tid('reasoning')}`;
  assert.equal(await page.$eval(reasoning, (d) => d.open), false);
  assert.match(await page.textContent(`${reasoning} summary`), /Weighing \*\*two\*\* options/);
  await page.click(`${reasoning} summary`);
  assert.equal(await page.$eval(reasoning, (d) => d.open), true);
  assert.equal(await page.textContent(`${reasoning} strong`), 'two');

  // Calls: the tool, the file change, the command (in that order), all completed.
  const calls = await page.$$eval(`${view} ${tid('call')}`, (els) => els.map((e) => [e.dataset.status, e.querySelector('.call-name').textContent]));
  assert.deepEqual(calls, [
    ['completed', 'grep'],
    ['completed', 'edit'],
    ['completed', 'echo from-the-console'],
  ]);
  const command = `${view} ${tid('call')}:has-text("echo from-the-console")`;
  assert.equal(await page.textContent(`${command} ${tid('call-output')}`), 'from-the-console\n');
  assert.equal(await page.$eval(`${command} ${tid('call-output')}`, (e) => getComputedStyle(e).fontFamily.includes('monospace')), true);
  assert.match(await page.textContent(`${command} .call-head`), /exit 0/);

  // The file change: a unified diff view with line numbers, added lines marked.
  const diff = `${view} ${tid('diff')}[data-path="src/hello.rs"]`;
  assert.match(await page.textContent(`${diff} figcaption`), /add\s*src\/hello\.rs\s*\+3\s*−0/);
  const rows = await page.$$eval(`${diff} tr`, (trs) => trs.map((tr) => [tr.className, ...[...tr.cells].map((c) => c.textContent)]));
  assert.deepEqual(rows.slice(-3), [
    ['d-add', '', '1', '+', 'added: fn main() {'],
    ['d-add', '', '2', '+', 'added:     println!("hi");'],
    ['d-add', '', '3', '+', 'added: }'],
  ]);
  assert.ok(rows.some((r) => r[0] === 'd-hunk' && r[4] === '@@ -0,0 +1,3 @@'), JSON.stringify(rows));

  // The plan: a checklist.
  const steps = await page.$$eval(`${view} ${tid('plan')} li`, (lis) => lis.map((li) => [li.textContent, li.dataset.status, li.querySelector('input').checked]));
  assert.deepEqual(steps, [
    ['Read the code', 'pending', false],
    ['Fix the bug', 'pending', false],
    ['Run the tests', 'pending', false],
  ]);

  // The reply, the approval's record, usage.
  const replies = await texts(page, 'message');
  assert.equal(replies.length, 1, JSON.stringify(replies));
  assert.match(replies[0], /You said: all done$/);
  assert.match(await page.textContent(`${view} ${tid('interaction')}`), /accepted by admin/);
  assert.match(await page.textContent(`${view} ${tid('usage')}`), /Tokens: \d+ in · \d+ out · \d+ total/);
  await shots(page, '06-transcript');

  // A failed turn shows its error; a turn canceled shows so.
  await send(page, '/fail the build is red');
  await page.waitForSelector(`${view} ${tid('error')}:has-text("scripted_failure")`);
  assert.match(await page.textContent(`${view} ${tid('error')}`), /the build is red/);
  await sessionStatus(page, 's1', 'ready');

  // Notices: a side conversation's boundary notice (scripted emits one when a side opens).
  await page.click(tid('open-side'));
  await page.waitForSelector(`${tid('side-panel')} ${tid('notice')}:has-text("side conversation boundary")`);
  assert.match(await page.textContent(`${tid('side-panel')} ${tid('notice')}`), /info|warning/);
  page.assertClean();
});

test('bidirectional controls in a title and a file name are shown, not obeyed', { timeout: 30_000 }, async () => {
  const rlo = '\u202E';
  await h.rest.call('POST', '/v1/rooms/bidi/sessions', { sessionId: 'b1', title: `invoice${rlo}fdp.exe` }, 201);
  const page = await h.open({ room: 'bidi', session: 'b1' });
  const item = tid('session-item', '[data-session="b1"]');
  await page.waitForSelector(item);
  const name = await page.textContent(`${item} .name`);
  assert.equal(name, 'invoice⟦U+202E⟧fdp.exe');
  assert.ok(!name.includes(rlo), 'the override itself is not in the page');
  await send(page, `/edit notes${rlo}txt.sh hello`);
  await page.waitForSelector(`${view} ${tid('diff')}`);
  assert.equal(await page.textContent(`${view} ${tid('diff')} .diff-path`), 'notes⟦U+202E⟧txt.sh');
  page.assertClean();
});

test('bidirectional controls reach no approval card, question, plan, tool call, model or goal', { timeout: 45_000 }, async () => {
  const rlo = '\u202E';
  await h.rest.call('POST', '/v1/rooms/bidi2/sessions', { sessionId: 'b2', settings: { model: `gpt${rlo}5` } }, 201);
  const page = await h.open({ room: 'bidi2', session: 'b2' });
  await page.waitForSelector(`${view} .meta`);
  assert.match(await page.textContent(`${view} .meta`), / · model gpt⟦U\+202E⟧5/);
  const pending = `${view} ${tid('interaction')}[data-state="pending"]`;

  // The approval card: `sh ./invoice<RLO>fdp.sh` would read `sh ./invoicehs.pdf`.
  await send(page, `/run sh ./invoice${rlo}fdp.sh`);
  await page.waitForSelector(`${pending} ${tid('interaction-command')}`);
  const command = await page.textContent(`${pending} ${tid('interaction-command')}`);
  assert.equal(command.split('\n')[0], '$ sh ./invoice⟦U+202E⟧fdp.sh');
  assert.match(await page.textContent(`${pending} .interaction-title`), /invoice⟦U\+202E⟧fdp\.sh/);
  const card = await page.textContent(pending);
  assert.ok(!card.includes(rlo), `the override reached the card: ${JSON.stringify(card)}`);
  await page.click(`${pending} ${tid('decision-decline')}`);
  await sessionStatus(page, 'b2', 'ready');

  // A question.
  await send(page, `/ask Pay ${rlo}evil?`);
  await page.waitForSelector(`${pending}[data-kind="userInput"]`);
  assert.equal(await page.textContent(`${pending} ${tid('question-text')}`), 'Pay ⟦U+202E⟧evil?');
  await page.click(`${pending} ${tid('decision-decline')}`);
  await sessionStatus(page, 'b2', 'ready');

  // A plan, a tool call's name and arguments, a goal the agent set.
  await send(page, `/plan rm -rf ${rlo}/; build\n/tool read${rlo}_file a${rlo}b.txt\n/goal ship ${rlo}it idle`);
  await page.waitForSelector(`${view} ${tid('plan')}`);
  assert.deepEqual(await page.$$eval(`${view} ${tid('plan')} li span:first-of-type`, (els) => els.map((e) => e.textContent)), ['rm -rf ⟦U+202E⟧/', 'build']);
  await page.waitForSelector(`${view} ${tid('call')}[data-status="completed"]`);
  assert.equal(await page.textContent(`${view} ${tid('call')} .call-name`), 'read⟦U+202E⟧_file');
  assert.equal(await page.textContent(`${view} ${tid('call')} .call-args`), '{"args":"a⟦U+202E⟧b.txt"}');
  await page.waitForSelector(`${tid('goal-panel')} ${tid('goal-status')}[data-status="active"]`);
  assert.equal(await page.textContent(`${tid('goal-panel')} .goal-objective-text`), 'ship ⟦U+202E⟧it idle');
  await sessionStatus(page, 'b2', 'ready');
  for (const id of ['plan', 'call', 'info']) {
    const shown = await page.$$eval(`${view} ${tid(id)}`, (els) => els.map((e) => e.textContent).join('\n'));
    assert.ok(!shown.includes(rlo), `the override reached a ${id}: ${JSON.stringify(shown)}`);
  }
  page.assertClean();
});
