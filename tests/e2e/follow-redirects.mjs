#!/usr/bin/env node
// A stand-in for the system browser ($BROWSER) in the OAuth tests: opens the URL it is
// given with GET and follows every redirect (30x + Location, up to 20), so an
// authorization server that approves at once (the SDK's demo provider) lands on the
// app's loopback redirect listener just as a person clicking "Allow" would. Appends each
// URL it visited to $FOLLOW_REDIRECTS_LOG when set (the test checks the browser was used).
// While the file $FOLLOW_REDIRECTS_HOLD exists it only logs `held: URL` and opens nothing:
// a person who never finishes signing in (the test of Cancel).
import { appendFileSync, existsSync } from 'node:fs';

const start = process.argv[2];
if (!start) {
  console.error('usage: follow-redirects.mjs URL');
  process.exit(2);
}
const log = (line) => {
  if (process.env.FOLLOW_REDIRECTS_LOG) appendFileSync(process.env.FOLLOW_REDIRECTS_LOG, `${line}\n`);
};
if (process.env.FOLLOW_REDIRECTS_HOLD && existsSync(process.env.FOLLOW_REDIRECTS_HOLD)) {
  log(`held: ${start}`);
  process.exit(0);
}
let url = new URL(start);
for (let hop = 0; hop < 20; hop++) {
  log(url.href);
  let res;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000) });
  } catch (e) {
    log(`error: ${e.message}`);
    console.error(`follow-redirects: ${url.href}: ${e.message}`);
    process.exit(1);
  }
  const next = res.headers.get('location');
  await res.body?.cancel();
  if (res.status >= 300 && res.status < 400 && next) {
    url = new URL(next, url);
    continue;
  }
  log(`done: ${res.status}`);
  process.exit(res.ok ? 0 : 1);
}
log('error: too many redirects');
process.exit(1);
