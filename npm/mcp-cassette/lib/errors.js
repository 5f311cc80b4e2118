// The errors a test sees when a request found no recorded answer (docs/adapters.md, "Errors").
// Both entry points (`mcp-cassette/vitest`, `mcp-cassette/jest`) import this one module, so one
// `instanceof` check covers either.

/** Miss kinds that mean "a recording matched the method (and tool) and diverged". */
const MISMATCH_KINDS = new Set(["arguments-differ", "params-differ"]);

/** True when a miss reason is a divergence from a recording rather than an absence. */
export function isMismatch(reason) {
  return reason != null && MISMATCH_KINDS.has(reason.kind);
}

/** What every adapter error shares: all misses of the test, and the first one's reason. */
export class ReplayError extends Error {
  constructor(message, misses) {
    super(message);
    this.name = new.target.name;
    this.misses = misses;
    this.reason = misses[0]?.reason;
  }
}

/** Nothing in the cassette answered: an unknown method or tool, an exhausted recording, … */
export class CassetteMissError extends ReplayError {}

/** A recording matched method and tool but diverged; `.changes` is the diff. */
export class CassetteMismatchError extends ReplayError {
  constructor(message, misses) {
    super(message, misses);
    this.changes = misses[0]?.reason?.changes ?? [];
  }
}

/**
 * The error for one test's misses, or `undefined` when there were none. The first miss picks the
 * class and the sentence; the others are counted.
 */
export function missesToError(misses) {
  if (!misses || misses.length === 0) return undefined;
  const [first] = misses;
  let message =
    `mcp-cassette: no recorded answer for ${JSON.stringify(first.method)}, ` +
    `${first.diagnosis}. Re-record the cassette or adjust the interaction.`;
  if (misses.length > 1) {
    message += `\n(and ${misses.length - 1} further miss(es) in this test)`;
  }
  return isMismatch(first.reason)
    ? new CassetteMismatchError(message, misses)
    : new CassetteMissError(message, misses);
}

/**
 * Recordings no request of the describe block used, under `failOnUnused` (docs/replay.md,
 * "Unused recordings"). Not a ReplayError: nothing missed; the cassette holds more than the tests
 * asked for. `.unused` lists them: `{ line, method, tool }`.
 */
export class CassetteUnusedError extends Error {
  constructor(message, unused) {
    super(message);
    this.name = new.target.name;
    this.unused = unused;
  }
}

/** How many unused recordings the message names; the rest are counted. */
const UNUSED_SHOWN = 20;

/** The error for a block's unused recordings, or `undefined` when every one was used. */
export function unusedToError(unused, cassette) {
  if (!unused || unused.length === 0) return undefined;
  const named = unused.slice(0, UNUSED_SHOWN).map((u) => {
    const tool = u.tool == null ? "" : ` ${JSON.stringify(u.tool)}`;
    return `  ${u.method}${tool} (line ${u.line})`;
  });
  if (unused.length > UNUSED_SHOWN) named.push(`  … and ${unused.length - UNUSED_SHOWN} more`);
  return new CassetteUnusedError(
    `mcp-cassette: ${unused.length} recorded answer(s) in ${cassette} were never used by this ` +
      `describe block (failOnUnused):\n${named.join("\n")}\nRemove them (re-record the ` +
      `cassette) or call what they record.`,
    unused,
  );
}
