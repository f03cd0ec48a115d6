// chat.mjs: the web UI in a real browser (Debian's Chromium driven by
// playwright-core). Run by cmd/nexus TestWebUIInBrowser:
//   NODE_PATH=.../node_modules node chat.mjs BASE_URL SCREENSHOT_DIR CHROMIUM
// It sends a message, sees tokens stream, a tool card with its source badge
// and its result, the final answer rendered from Markdown; reloads and sees
// the stored turn; checks a phone-sized screen and keyboard use; fails on
// any console error.
import { createRequire } from "node:module";

// playwright-core is installed outside the repository (scripts/install-
// test-tools.sh); NODE_PATH names its node_modules.
const require = createRequire((process.env.NODE_PATH || ".") + "/");
const { chromium } = require("playwright-core");

const [base, shots, executablePath] = process.argv.slice(2);
const fail = (msg) => { console.error("FAIL: " + msg); process.exitCode = 1; };
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const errors = [];
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });

  // Keyboard: type and send with Enter.
  await page.locator("#input").focus();
  await page.keyboard.type("What can you do?");
  // Tokens stream: the answer grows before the turn completes.
  const seen = [];
  const poll = setInterval(async () => {
    try { seen.push(await page.locator(".msg.assistant .body").last().innerText()); } catch (_) {}
  }, 20);
  await page.keyboard.press("Enter");
  await page.locator(".msg.user").filter({ hasText: "What can you do?" }).waitFor();
  await page.locator(".msg.assistant strong", { hasText: "three" }).waitFor({ timeout: 15000 });
  await page.locator("#send:not([disabled])").waitFor();
  clearInterval(poll);
  const partial = seen.filter((s) => s && !s.includes("agents."));
  if (!partial.length) fail("no partial answer was seen while it streamed: " + JSON.stringify(seen.slice(0, 5)));

  // The tool card: name, local badge, done, result expands.
  const card = page.locator("details.tool").filter({ hasText: "get_tools" }).first();
  await card.waitFor();
  const badge = await card.locator(".badge").innerText();
  if (badge.trim().toLowerCase() !== "local") fail("tool badge: " + badge);
  if ((await card.locator(".state").innerText()).trim() !== "done") fail("tool card not done");
  await card.locator("summary").click();
  const result = await card.locator('pre[aria-label="result"]').innerText();
  if (!result.includes("agents")) fail("tool result: " + result.slice(0, 200));
  const answer = await page.locator(".msg.assistant .body").last().innerText();
  if (!answer.includes("Nexus has three agents.")) fail("answer: " + answer);
  await page.screenshot({ path: shots + "/chat.png", fullPage: true });

  // Reload: the conversation is listed; opening it shows the stored turn.
  await page.reload({ waitUntil: "domcontentloaded" });
  const conv = page.locator("#conv-list button").first();
  await conv.waitFor({ timeout: 10000 });
  await conv.click();
  await page.locator(".msg.user", { hasText: "What can you do?" }).waitFor();
  await page.locator(".msg.assistant strong", { hasText: "three" }).waitFor();
  await page.locator("details.tool", { hasText: "get_tools" }).locator(".badge", { hasText: "local" }).waitFor();

  // The tool browser and the traces.
  await page.locator('.tab[data-view="tools"]').click();
  await page.locator("#tool-filter").fill("belief_query");
  await page.locator("#tool-list li", { hasText: "belief_query" }).waitFor();
  await page.locator('.tab[data-view="traces"]').click();
  await page.locator("#trace-rows tr", { hasText: "get_tools" }).first().waitFor();
  await page.locator('.tab[data-view="settings"]').click();
  await page.locator("#quota", { hasText: "prompts used today" }).waitFor();

  // A phone-sized screen: the menu opens the sections, the chat is usable.
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  phone.on("console", (m) => { if (m.type() === "error") errors.push("phone: " + m.text()); });
  await phone.goto(base + "/", { waitUntil: "domcontentloaded" });
  await phone.locator("#menu").click();
  await phone.locator('.tab[data-view="chat"]').waitFor({ state: "visible" });
  await phone.locator('.tab[data-view="chat"]').click();
  const box = await phone.locator("#input").boundingBox();
  if (!box || box.width < 200 || box.x + box.width > 390) fail("the message box on a phone: " + JSON.stringify(box));
  await phone.screenshot({ path: shots + "/phone.png" });
} catch (e) {
  fail(e.stack || String(e));
} finally {
  await browser.close();
}
if (errors.length) fail("console errors: " + errors.join(" | "));
if (!process.exitCode) console.log("ok");
