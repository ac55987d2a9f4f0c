// Pipeline: the gateway's own Prometheus metrics (the series the dashboards read), every few
// seconds while the tab is visible: messages per topic, queries by outcome, time per stage,
// in-flight queries. Without a valid key it says so once and stops.
import { authHeaders, checkAuthorized, refusal } from "./common.js";

const POLL_MS = 5000;
const statusLine = document.getElementById("pipeline-status");
const tbody = document.querySelector("#pipeline tbody");
const facts = document.getElementById("pipeline-facts");
let previous = null;
let refused = false; // no valid key (401) or not an admin key (403): nothing to poll

function parse(text) {
  const samples = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/);
    if (!match) continue;
    const labels = {};
    for (const pair of (match[2] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]] = pair[2];
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

function sum(samples, name, filter = () => true) {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((total, s) => total + s.value, 0);
}

function cell(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function fact(name, value) {
  facts.append(cell("dt", name), cell("dd", value));
}

async function refresh() {
  let samples;
  try {
    const response = await fetch("/metrics", { headers: authHeaders() });
    checkAuthorized(response.status);
    refused = refused || response.status === 401 || response.status === 403;
    if (!response.ok) throw new Error(refusal(response.status));
    samples = parse(await response.text());
  } catch (error) {
    statusLine.textContent = `Could not read the metrics: ${error.message}`;
    return;
  }
  const now = Date.now();
  const topics = new Map();
  for (const s of samples) {
    if (s.name !== "treerag_messages_published_total" && s.name !== "treerag_messages_consumed_total") continue;
    const row = topics.get(s.labels.topic) || { published: 0, consumed: 0 };
    row[s.name.includes("published") ? "published" : "consumed"] += s.value;
    topics.set(s.labels.topic, row);
  }
  const rows = [];
  for (const [topic, row] of [...topics.entries()].sort()) {
    const before = previous?.topics.get(topic);
    const seconds = previous ? (now - previous.at) / 1000 : 0;
    const rate = before && seconds ? ((row.published + row.consumed - before.published - before.consumed) / seconds).toFixed(2) : "–";
    rows.push(document.createElement("tr"));
    rows.at(-1).append(cell("th", topic, { scope: "row" }), cell("td", String(row.published)), cell("td", String(row.consumed)), cell("td", rate));
  }
  tbody.replaceChildren(...rows);
  facts.replaceChildren();
  for (const outcome of ["answered", "abstained", "failed", "timeout"]) {
    fact(`Queries ${outcome}`, String(sum(samples, "treerag_queries_total", (l) => l.outcome === outcome)));
  }
  fact("Queries in flight", String(sum(samples, "treerag_gateway_inflight_queries")));
  const stages = new Set(samples.filter((s) => s.name === "treerag_query_stage_seconds_count").map((s) => s.labels.stage));
  for (const stage of [...stages].sort()) {
    const mean = (phase) => {
      const count = sum(samples, "treerag_query_stage_seconds_count", (l) => l.stage === stage && l.phase === phase);
      const total = sum(samples, "treerag_query_stage_seconds_sum", (l) => l.stage === stage && l.phase === phase);
      return count ? `${((total / count) * 1000).toFixed(1)} ms` : "–";
    };
    fact(`${stage}: mean queue lag / work`, `${mean("queued")} / ${mean("processing")}`);
  }
  fact("Failures seen by the gateway", String(sum(samples, "treerag_failures_total")));
  fact("Dead letters seen by the gateway", String(sum(samples, "treerag_dlq_messages_total")));
  previous = { at: now, topics };
  statusLine.textContent = `Updated ${new Date(now).toLocaleTimeString()}.`;
}

const stagesStatus = document.getElementById("stages-status");
const stagesBody = document.querySelector("#stages tbody");

function number(value, digits = 2) {
  return value === null || value === undefined ? "–" : value.toFixed(digits);
}

function seconds(value) {
  return value === null || value === undefined ? "–" : `${(value * 1000).toFixed(1)} ms`;
}

async function refreshStages() {
  try {
    const response = await fetch("/v1/pipeline", { headers: authHeaders() });
    checkAuthorized(response.status);
    refused = refused || response.status === 401 || response.status === 403;
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) throw new Error(refusal(response.status, body));
    if (body.source !== "prometheus") {
      stagesStatus.textContent = `Per-stage figures need Prometheus: ${body.detail}.`;
      stagesBody.replaceChildren();
      return;
    }
    stagesBody.replaceChildren(...body.stages.map((s) => {
      const row = document.createElement("tr");
      row.append(cell("th", s.stage, { scope: "row" }), cell("td", number(s.messages_per_s)), cell("td", number(s.consumer_lag, 0)),
        cell("td", number(s.failures_15m, 0)), cell("td", number(s.dead_letters_15m, 0)), cell("td", seconds(s.handler_p95_s)),
        cell("td", seconds(s.queue_p95_s)));
      return row;
    }));
    stagesStatus.textContent = body.stages.length ? "From Prometheus, the dashboards' queries." : "Prometheus has no stage series yet.";
  } catch (error) {
    stagesStatus.textContent = `Could not read the per-stage figures: ${error.message}`;
  }
}

let timer = null;

// Again every POLL_MS while someone can see the page and the gateway accepts the key.
async function refreshAll() {
  clearTimeout(timer);
  timer = null;
  await Promise.all([refresh(), refreshStages()]);
  clearTimeout(timer); // one timer, however many refreshes ran at once
  timer = !refused && document.visibilityState === "visible" ? setTimeout(refreshAll, POLL_MS) : null;
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && !timer && !refused) refreshAll();
});

refreshAll();
