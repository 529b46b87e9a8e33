// Runs class mode's student page script (served by the server under test) in Node against a
// stand-in for the few DOM calls it makes, and plays a student: answer the number question, follow
// the teacher to the next step within a second, pick a choice, see the reveal. Started by
// tests/test_class_server.cpp (APageFollowsTheLesson), which plays the teacher. Exit 0 = passed.
"use strict";
const base = "http://127.0.0.1:" + process.argv[2];

class Element {
  constructor(tag) {
    this.tag = tag;
    this.children = [];
    this.handlers = {};
    this.hidden = false;
    this.value = "";
    this.disabled = false;
    this.className = "";
    this.classes = new Set();
    this.classList = { toggle: (c, on) => (on ? this.classes.add(c) : this.classes.delete(c)) };
    this._text = "";
  }
  get textContent() { return this._text; }
  set textContent(t) { this._text = String(t); this.children = []; }
  addEventListener(type, fn) { this.handlers[type] = fn; }
  appendChild(c) { this.children.push(c); }
  fire(type) { return this.handlers[type]({ preventDefault() {} }); }
}
const elements = {};
const store = {};
globalThis.window = globalThis;
globalThis.document = {
  getElementById: (id) => (elements[id] = elements[id] || new Element(id)),
  createElement: (tag) => new Element(tag),
};
globalThis.localStorage = { getItem: (k) => store[k] ?? null, setItem: (k, v) => (store[k] = v) };
globalThis.location = { search: "?code=1234" };
const realFetch = fetch;
globalThis.fetch = (url, options) => realFetch(base + url, options);

const el = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, test, ms) {
  const start = Date.now();
  while (!test()) {
    if (Date.now() - start > ms) throw new Error("waited " + ms + " ms for " + what);
    await sleep(20);
  }
  return Date.now() - start;
}
function check(ok, what) {
  if (!ok) throw new Error(what);
}

(async () => {
  const page = await (await realFetch(base + "/")).text();
  const script = page.match(/<script>([\s\S]*)<\/script>/)[1];
  new Function(script)();

  await until("step 1", () => el("title").textContent === "Step 1: Scores", 3000);
  check(el("question").textContent === "Score of Fear and is?", "the question is shown");
  check(!el("number-row").hidden, "a number question shows the number box");
  check(/^[0-9a-f]{32}$/.test(store["attn-client"]), "a random client id is kept");
  el("number").value = "0.54";
  el("send").fire("click");
  await until("the number sent", () => el("status").textContent.startsWith("Sent"), 3000);

  // The teacher moves on as soon as the answer arrives: the page follows within a second.
  const ms = await until("step 2", () => el("title").textContent === "Step 2: Weights", 1000);
  console.log("followed the step change in " + ms + " ms");
  check(el("number-row").hidden, "a choice question hides the number box");
  const choices = el("choices").children;
  check(choices.map((c) => c.textContent).join("|") === "Fear|is", "the choices are shown");
  choices[1].fire("click");
  check(choices[1].classes.has("picked"), "the picked choice is marked");
  el("send").fire("click");
  await until("the choice sent", () => el("status").textContent.startsWith("Sent"), 3000);

  // The teacher reveals: the page says so, with the answer, and Send is off.
  await until("the reveal", () => !el("revealed").hidden, 2000);
  check(el("revealed").textContent.includes("is"), "the revealed answer is shown");
  check(el("send").disabled, "Send is off after the reveal");
  console.log("ok");
  process.exit(0);
})().catch((e) => {
  console.log("FAILED: " + e.message);
  process.exit(1);
});
