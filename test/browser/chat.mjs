// chat.mjs: the web UI in a real browser (Debian's Chromium driven by
// playwright-core), as a person sees it. Run by cmd/nexus TestWebUIInBrowser:
//   NODE_PATH=.../node_modules node chat.mjs BASE_URL SCREENSHOT_DIR CHROMIUM
// At a desktop's size (1280×800) and a phone's (390×844) it checks the
// welcome screen, a streamed answer rendered from Markdown (a table,
// highlighted code with a copy button), the tool cards, the conversation's
// URL surviving a reload, its title in the list, renaming and deleting
// conversations (conversations.mjs), each section shown alone
// and nothing wider than the screen (scenario.mjs); the sign-in screen on a
// 401 (signin.mjs); approval, a missing model and a dropped connection over
// a scripted socket (socket.mjs). Any console error fails, and so does any
// serious or critical axe-core violation in a view (axe.mjs).
import { createRequire } from "node:module";
import { Checks } from "./lib.mjs";
import { chatScenario } from "./scenario.mjs";
import { conversationsScenario } from "./conversations.mjs";
import { signinScenario } from "./signin.mjs";
import { firstRender, longAnswer } from "./perf.mjs";
import { socketScenario } from "./socket.mjs";

// playwright-core is installed outside the repository (scripts/install-
// test-tools.sh); NODE_PATH names its node_modules.
const require = createRequire((process.env.NODE_PATH || ".") + "/");
const { chromium } = require("playwright-core");

const [base, shots, executablePath] = process.argv.slice(2);
const c = new Checks();
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});

/** page opens a fresh context (its own storage) at size, collecting console errors. */
async function page(size, name, ignore = () => false) {
  const ctx = await browser.newContext({ viewport: size, reducedMotion: "reduce" });
  const p = await ctx.newPage();
  p.on("console", (m) => {
    if (m.type() === "error" && !ignore(m.text())) c.fail(`${name}: console error: ${m.text()}`);
  });
  p.on("pageerror", (e) => c.fail(`${name}: page error: ${e.message}`));
  return p;
}

const sizes = [
  { name: "desktop", size: { width: 1280, height: 800 } },
  { name: "phone", size: { width: 390, height: 844 } },
];
try {
  for (const { name, size } of sizes) {
    const phone = size.width < 700;
    // The chat scenario adds a key the server refuses (400) on purpose;
    // Chromium logs the response as a console error.
    const refusedKey = (t) => t.includes("status of 400");
    await run(name + " chat", () => page(size, name, refusedKey).then((p) => chatScenario(c, p, { base, shots, name, phone })));
    // It renames to a blank title, which the server refuses (400), on purpose.
    await run(name + " conversations", () => page(size, name, refusedKey).then((p) => conversationsScenario(c, p, { base, shots, name, phone })));
    await run(name + " sign-in", () =>
      page(size, name, (t) => t.includes("401")).then((p) => signinScenario(c, p, { base, shots, name })));
    await run(name + " socket", () => page(size, name).then((p) => socketScenario(c, p, { base, shots, name, phone })));
  }
  // Measured and printed, not asserted (perf.mjs).
  const desktop = sizes[0];
  await run("perf first render", () => firstRender(browser, base, desktop.size, "1280×800"));
  await run("perf long answer", () => longAnswer(c, browser, base, desktop.size, "1280×800"));
} finally {
  await browser.close();
}

async function run(what, fn) {
  try {
    await fn();
  } catch (e) {
    c.fail(what + ": " + (e.stack || String(e)));
  }
}

if (c.failures.length) {
  console.error(`${c.failures.length} failure(s)`);
  process.exitCode = 1;
} else {
  console.log("ok");
}
