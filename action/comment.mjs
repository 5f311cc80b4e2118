// The GitHub Action's report step (docs/action.md): joins the Markdown sections that
// `check --format markdown` and `snapshot --check --format markdown` wrote under one marker and
// verdict, writes the result to the job log, the job summary and $RUNNER_TEMP, and keeps one
// pull-request comment up to date with it: found by the marker, edited in place, created when
// missing.
//
// No dependencies: Node's own fetch against $GITHUB_API_URL, so a test can point it at a
// stand-in of the REST API. A comment that cannot be written (a fork's read-only token) is a
// warning, never a failure: the gate is a later step and runs regardless.
//
// Inputs are environment variables (set by action.yml):
//   MCP_MODE                 check | snapshot | both
//   MCP_FAIL_ON              drift gate, MCP_LINT_FAIL_ON lint gate, MCP_SNAPSHOT_FILE
//   MCP_CHECK_STATUS         exit status of check ("" when it did not run), MCP_CHECK_MD and
//   MCP_CHECK_ERR            the files its stdout and stderr went to; the same three for
//   MCP_SNAPSHOT_*           snapshot --check
//   MCP_COMMENT              "true" to write the pull-request comment
//   MCP_GITHUB_TOKEN         token for the REST API
//   GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH,
//   GITHUB_STEP_SUMMARY, RUNNER_TEMP  as GitHub Actions sets them

import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** First line of the comment: how the step finds its own comment again. */
export const MARKER = "<!-- mcp-cassette-action -->";
/** GitHub refuses comments over 65,536 characters; stay clear of it. */
export const MAX_BODY = 60_000;
const STDERR_CHARS = 4_000;

function readText(path) {
  if (!path || !existsSync(path)) return "";
  return readFileSync(path, "utf8");
}

/** `text` fenced by more backticks than any run inside it. */
export function fence(text) {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}text\n${text}${text.endsWith("\n") ? "" : "\n"}${ticks}\n`;
}

function tail(text, max) {
  return text.length <= max ? text : `... (truncated)\n${text.slice(text.length - max)}`;
}

/** One command's part of the body: its own Markdown, or why there is none. */
function section(title, status, markdown, stderr) {
  if (status === 0 || status === 1) {
    if (markdown.trim()) return markdown;
    return `**${title}**: ❌ produced no report (exit ${status}).\n`;
  }
  let out = `**${title}**: ❌ could not run (exit ${status}).\n`;
  if (stderr.trim()) out += `\n${fence(tail(stderr, STDERR_CHARS))}`;
  return out;
}

/** The whole comment body, from the environment the action gives this script. */
export function buildBody(env = process.env) {
  const mode = env.MCP_MODE || "both";
  const parts = [];
  const statuses = [];
  if (env.MCP_CHECK_STATUS) {
    const status = Number(env.MCP_CHECK_STATUS);
    statuses.push(status);
    parts.push(section("Safety check", status, readText(env.MCP_CHECK_MD), readText(env.MCP_CHECK_ERR)));
  }
  if (env.MCP_SNAPSHOT_STATUS) {
    const status = Number(env.MCP_SNAPSHOT_STATUS);
    statuses.push(status);
    parts.push(
      section("Contract drift", status, readText(env.MCP_SNAPSHOT_MD), readText(env.MCP_SNAPSHOT_ERR)),
    );
  }
  const pass = statuses.length > 0 && statuses.every((status) => status === 0);
  const head = `${MARKER}\n### mcp-cassette: ${pass ? "✅ PASS" : "❌ FAIL"}\n`;
  const foot =
    `<sub>mode: \`${mode}\`, drift gate: \`${env.MCP_FAIL_ON || "breaking"}\`, ` +
    `lint gate: \`${env.MCP_LINT_FAIL_ON || "error"}\`. ` +
    "Rule ids never change meaning: match on them, not on the wording.</sub>\n";
  let middle = parts.map((part) => `\n${part}`).join("");
  const room = MAX_BODY - head.length - foot.length - 40;
  if (middle.length > room) middle = `${middle.slice(0, room)}\n\n... (truncated)\n`;
  return `${head}${middle}\n${foot}`;
}

/** Workflow-command escaping for a `::warning::` message. */
function escapeCommand(text) {
  return String(text).replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/** Prints untrusted text to the log with workflow commands switched off around it. */
function logVerbatim(text) {
  const token = randomUUID();
  process.stdout.write(`::stop-commands::${token}\n${text}${text.endsWith("\n") ? "" : "\n"}::${token}::\n`);
}

class ApiError extends Error {}

async function api(method, url, token, body) {
  const response = await fetch(url, {
    method,
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${token}`,
      "user-agent": "mcp-cassette-action",
      "x-github-api-version": "2022-11-28",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) {
    let detail = text;
    try {
      detail = JSON.parse(text).message ?? text;
    } catch {}
    throw new ApiError(`${method} ${new URL(url).pathname} answered ${response.status}: ${detail}`);
  }
  return { json: text ? JSON.parse(text) : null, link: response.headers.get("link") };
}

/** The `rel="next"` URL of a Link header, if any. */
function nextPage(link) {
  for (const part of (link ?? "").split(",")) {
    const match = part.match(/<([^>]+)>\s*;\s*rel="next"/);
    if (match) return match[1];
  }
  return null;
}

/** Creates or edits the one comment on `issue` whose body starts with the marker. */
export async function upsertComment({ apiUrl, repository, issue, token, body }) {
  const base = apiUrl.replace(/\/+$/, "");
  let url = `${base}/repos/${repository}/issues/${issue}/comments?per_page=100`;
  let existing = null;
  while (url && !existing) {
    const page = await api("GET", url, token);
    existing = (page.json ?? []).find((comment) => (comment.body ?? "").startsWith(MARKER)) ?? null;
    url = nextPage(page.link);
  }
  if (existing) {
    await api("PATCH", `${base}/repos/${repository}/issues/comments/${existing.id}`, token, { body });
    return { action: "updated", id: existing.id };
  }
  const created = await api("POST", `${base}/repos/${repository}/issues/${issue}/comments`, token, { body });
  return { action: "created", id: created.json?.id };
}

/** The pull-request number of the triggering event, or null outside pull requests. */
function pullRequestNumber(env) {
  if (!env.GITHUB_EVENT_PATH || !existsSync(env.GITHUB_EVENT_PATH)) return null;
  try {
    const event = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, "utf8"));
    return event.pull_request?.number ?? null;
  } catch {
    return null;
  }
}

export async function main(env = process.env) {
  const body = buildBody(env);
  logVerbatim(body);
  if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, `${body}\n`);
  if (env.RUNNER_TEMP) writeFileSync(join(env.RUNNER_TEMP, "mcp-cassette-report.md"), body);
  if (env.MCP_COMMENT !== "true") return;
  const issue = pullRequestNumber(env);
  if (issue === null) {
    console.log("mcp-cassette: no pull-request context, skipping the comment.");
    return;
  }
  try {
    const done = await upsertComment({
      apiUrl: env.GITHUB_API_URL || "https://api.github.com",
      repository: env.GITHUB_REPOSITORY,
      issue,
      token: env.MCP_GITHUB_TOKEN ?? "",
      body,
    });
    console.log(`mcp-cassette: ${done.action} the pull-request comment (id ${done.id}).`);
  } catch (err) {
    let detail = err instanceof Error ? err.message : String(err);
    if (/ 403: /.test(detail)) {
      detail +=
        " (a pull request from a fork gets a read-only token; elsewhere, grant the job " +
        "`pull-requests: write`)";
    }
    console.log(`::warning::mcp-cassette could not write the pull-request comment: ${escapeCommand(detail)}`);
  }
}

// Run when executed (`node comment.mjs`), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
