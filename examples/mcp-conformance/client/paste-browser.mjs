#!/usr/bin/env node
// A browser on another machine: follows the authorization URL's redirects
// but not the last, to toolhost's loopback port, which it cannot reach;
// the person copies that address from the address bar and pastes it into
// `toolhost mcp login --paste` ($PASTE_TO: the login's standard input).
import { appendFileSync } from "node:fs";

let url = process.argv[2];
for (let hops = 0; hops < 10; hops++) {
  const answer = await fetch(url, { redirect: "manual" });
  const next = answer.headers.get("location");
  if (!next) process.exit(1);
  url = new URL(next, url).href;
  if (/^http:\/\/(127\.0\.0\.1|localhost):\d+\/callback\?/.test(url)) {
    appendFileSync(process.env.PASTE_TO, `some noise first\n${url}\n`);
    process.exit(0);
  }
}
process.exit(1);
