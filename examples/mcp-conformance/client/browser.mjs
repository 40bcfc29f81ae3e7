#!/usr/bin/env node
// A browser without a person: follows the authorization URL's redirects,
// the last of which reaches toolhost's loopback listener with the code.
const answer = await fetch(process.argv[2]);
await answer.text();
process.exit(answer.ok ? 0 : 1);
