// scenario.mjs: a conversation against the real server and its fake model
// (cmd/nexus TestWebUIInBrowser), then each section of the page.
import { axeCheck } from "./axe.mjs";
import { expectSeen, expectUnseen, noOverflow, seen, until, waitSeen } from "./lib.mjs";

const question = "What can you do?";

/** views are the sections, by the accessible name of their region. */
const views = ["Chat", "Tools", "Traces", "Settings"];

/** openSection clicks a section's tab (opening a menu first if the page hides the tabs behind one). */
async function openSection(page, name) {
  const nav = page.getByRole("navigation", { name: "Sections" });
  const tab = nav.getByText(name, { exact: true });
  if (!(await seen(page, tab)).ok) {
    const menu = page.getByRole("button", { name: "Menu" });
    if (await menu.count()) await menu.click();
  }
  await tab.click();
}

/** region is a section by name. */
const region = (page, name) => page.getByRole("region", { name, exact: true });

/** chatScenario runs at one size; o: {base, shots, name, phone}. */
export async function chatScenario(c, page, o) {
  const shot = (what) => page.screenshot({ path: `${o.shots}/${o.name}-${what}.png` });
  await page.goto(o.base + "/", { waitUntil: "domcontentloaded" });

  // A new conversation welcomes with example questions.
  await waitSeen(c, page.getByText("Does MATH 1171 at Langara transfer to UBC?").first(), `${o.name}: the welcome screen`);
  await expectSeen(c, page, page.getByText("Does MATH 1171 at Langara transfer to UBC?").first(), `${o.name}: the welcome screen's example question`);
  await noOverflow(c, page, `${o.name} welcome`);
  await shot("welcome");
  await axeCheck(c, page, `${o.name} welcome`);

  // Keyboard: the first Tab reaches a visible skip link, which leads to the message box.
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  c.check(await skip.evaluate((el) => el === document.activeElement).catch(() => false), `${o.name}: the first Tab does not reach a "Skip to content" link`);
  await expectSeen(c, page, skip, `${o.name}: the focused skip link`);
  if (await skip.count()) {
    await page.keyboard.press("Enter");
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label") + "|" + document.activeElement.id);
    c.check(focused.includes("input"), `${o.name}: the skip link does not lead to the message box (focus on ${focused})`);
  }

  // The message list is not a live region (each token would be read out).
  const liveList = await page.locator(".messages[aria-live], #messages[aria-live]").count();
  c.check(liveList === 0, `${o.name}: the message list is an aria-live region`);

  // Type and send with Enter; the answer streams.
  const input = page.getByRole("textbox", { name: "Message" });
  await input.focus();
  await page.keyboard.type(question);
  const seenText = [];
  let polling = true;
  const poll = (async () => {
    while (polling) {
      try {
        seenText.push(await page.locator(".msg.assistant").last().innerText({ timeout: 200 }));
      } catch (_) {
        // not there yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const table = page.locator(".msg.assistant table").last();
  try {
    await page.keyboard.press("Enter");
    await page.locator(".msg.user", { hasText: question }).first().waitFor();
    await page.locator(".msg.assistant", { hasText: "Done." }).last().waitFor({ timeout: 20000 });
    await waitSeen(c, table, `${o.name}: the answer's Markdown table`, 2000);
    await waitSeen(c, page.getByRole("button", { name: "Send", exact: true }), `${o.name}: the Send button after the answer`, 5000);
  } finally {
    polling = false;
    await poll;
  }
  c.check(seenText.some((s) => s.includes("three") && !s.includes("Done.")), `${o.name}: no partial answer was seen while it streamed`);

  // Markdown: a table, highlighted code, a copy button.
  if (await table.count()) {
    c.check((await table.locator("th").allInnerTexts()).join("|").includes("Course"), `${o.name}: the table has no "Course" header`);
    await expectSeen(c, page, table, `${o.name}: the answer's table`);
  }
  const hl = page.locator(".msg.assistant pre code [class^='hljs-']").first();
  c.check((await hl.count()) > 0, `${o.name}: the code block is not highlighted`);
  await expectSeen(c, page, page.locator(".msg.assistant").last().getByRole("button", { name: "Copy code" }), `${o.name}: the code block's copy button`);

  // One announcement of the finished answer, outside the message list.
  const live = page.locator("[aria-live]:not(.messages)");
  await until(async () => (await live.allTextContents()).some((t) => t.includes("Done.")), `${o.name}: the live region to announce the answer`).catch((e) =>
    c.fail(e.message),
  );

  // The answer names the model that gave it; the switch offers the models
  // the user may use.
  const used = page.locator(".msg.assistant .model-used").last();
  await waitSeen(c, used, `${o.name}: the model that answered`, 5000);
  if (await used.count()) c.check((await used.innerText()).includes("fake-model"), `${o.name}: the answer does not name its model: ${await used.innerText()}`);
  const pick = page.getByLabel("Model", { exact: true });
  await expectSeen(c, page, pick, `${o.name}: the model switch`);
  if (await pick.count()) {
    const options = await pick.locator("option").allInnerTexts();
    c.check(options.some((t) => t.includes("server's model")) && options.some((t) => t.startsWith("Default")), `${o.name}: the model switch lacks the default or the server's model: ${options}`);
  }

  // The tool cards name the tool run, with source and state, collapsed.
  const card = page.locator(".tool", { has: page.locator("summary", { hasText: "session_list" }) }).last();
  if (await card.count()) {
    const summary = await card.locator("summary").innerText();
    c.check(/local/i.test(summary), `${o.name}: use_tool's card has no local badge: ${summary}`);
    c.check(/done/.test(summary), `${o.name}: use_tool's card is not done: ${summary}`);
    c.check(summary.includes("nexus / vkb"), `${o.name}: use_tool's card does not say where the tool is: ${summary}`);
    c.check(/\d(\.\d+)? m?s\b|<1 ms/.test(summary), `${o.name}: use_tool's card shows no duration: ${summary}`);
    await expectUnseen(c, page, card.locator(".tool-result"), `${o.name}: the collapsed card's result`);
    c.check(!(await card.locator("details").evaluate((d) => d.open)), `${o.name}: the tool card is not collapsed`);
    await card.locator("summary").click();
    await expectSeen(c, page, card.locator(".tool-result"), `${o.name}: the expanded card's result`);
    const result = await card.locator(".tool-result").innerText();
    c.check(result.includes('"sessions": [') && !result.includes('\\"'), `${o.name}: the result is not pretty-printed JSON: ${result.slice(0, 200)}`);
    const inputText = await card.locator(".tool-input").innerText();
    c.check(inputText.includes('"limit": 5'), `${o.name}: the input is not pretty-printed: ${inputText.slice(0, 200)}`);
  } else {
    c.fail(`${o.name}: no tool card names session_list (the tool use_tool ran)`);
  }
  const getTools = page.locator(".tool summary", { hasText: "get_tools" }).last();
  c.check((await getTools.count()) > 0 && /done/.test(await getTools.innerText()), `${o.name}: get_tools' card is missing or not done`);
  await noOverflow(c, page, `${o.name} chat`);
  await shot("chat");
  await axeCheck(c, page, `${o.name} chat (answer, tool cards)`);

  // The conversation has a URL; a reload stays on it and shows the stored turn.
  const hash = await page.evaluate(() => location.hash);
  c.check(/^#\/c\/.+/.test(hash), `${o.name}: the conversation's URL is not #/c/<id>: ${JSON.stringify(hash)}`);
  await page.reload({ waitUntil: "domcontentloaded" });
  await page
    .locator(".msg.user", { hasText: question })
    .first()
    .waitFor({ timeout: 10000 })
    .catch(() => c.fail(`${o.name}: a reload on ${hash} does not show the stored question`));
  await page
    .locator(".msg.assistant table")
    .first()
    .waitFor({ timeout: 10000 })
    .catch(() => c.fail(`${o.name}: a reload on ${hash} does not show the stored answer's table`));
  const stored = page.locator(".tool summary", { hasText: "session_list" }).first();
  c.check((await stored.count()) > 0 && /done/.test(await stored.innerText()), `${o.name}: the stored turn's use_tool card does not name session_list as done`);
  // The stored card keeps the call's duration.
  if (await stored.count()) {
    const text = await stored.innerText();
    c.check(/\d(\.\d+)? m?s\b|<1 ms/.test(text), `${o.name}: the stored turn's tool card shows no duration: ${text}`);
  }

  // The list titles it by its first message.
  if (o.phone) {
    await page.getByRole("button", { name: "Conversations", exact: true }).click({ timeout: 5000 }).catch((e) => c.fail(`${o.name}: no Conversations button: ${e.message.split("\n")[0]}`));
  }
  const entry = page.getByRole("complementary", { name: "Conversations" }).getByRole("link", { name: question });
  await entry
    .first()
    .waitFor({ timeout: 10000 })
    .catch(() => c.fail(`${o.name}: the conversation list has no entry titled "${question}"`));
  await expectSeen(c, page, entry.first(), `${o.name}: the conversation's entry in the list`);
  await expectSeen(c, page, page.getByRole("searchbox", { name: "Search conversations" }), `${o.name}: the conversation search box`);
  const search = page.getByRole("searchbox", { name: "Search conversations" });
  if (await search.count()) {
    await search.fill("no such title");
    await expectUnseen(c, page, entry.first(), `${o.name}: an entry the search excludes`);
    await search.fill("");
  }
  if (o.phone) {
    await shot("drawer");
    await axeCheck(c, page, `${o.name} drawer`);
    await page.getByRole("button", { name: "Close", exact: true }).click({ timeout: 5000 }).catch((e) => c.fail(`${o.name}: no Close button: ${e.message.split("\n")[0]}`));
    await expectUnseen(c, page, entry.first(), `${o.name}: the closed drawer's entry`);
  }

  // Each section alone on screen, nothing wider than it.
  for (const v of ["Tools", "Traces", "Settings", "Chat"]) {
    try {
      await openSection(page, v);
    } catch (e) {
      c.fail(`${o.name}: the ${v} tab cannot be clicked: ${e.message.split("\n")[0]}`);
      continue;
    }
    await region(page, v).waitFor({ timeout: 5000 }).catch(() => {});
    await expectSeen(c, page, region(page, v), `${o.name}: the ${v} section when selected`);
    for (const other of views.filter((x) => x !== v)) {
      await expectUnseen(c, page, region(page, other), `${o.name}: the ${other} section while ${v} is selected`);
    }
    if (v !== "Chat") await expectUnseen(c, page, page.getByRole("textbox", { name: "Message" }), `${o.name}: the message box while ${v} is selected`);
    try {
      if (v === "Tools") {
        await page.getByRole("searchbox", { name: "Search tools" }).fill("belief_query", { timeout: 5000 });
        await page.locator("#tool-list li", { hasText: "belief_query" }).first().waitFor({ timeout: 5000 });
        await toolParams(c, page, o);
      }
      if (v === "Traces") await traces(c, page, o);
      if (v === "Settings") {
        await region(page, "Settings").getByText("prompts used today").first().waitFor({ timeout: 5000 });
        await settings(c, page, o);
      }
    } catch (e) {
      c.fail(`${o.name}: ${v}: ${e.message.split("\n")[0]}`);
    }
    await noOverflow(c, page, `${o.name} ${v}`);
    await shot("view-" + v.toLowerCase());
    if (v !== "Chat") await axeCheck(c, page, `${o.name} ${v}`);
  }
  await expectSeen(c, page, page.getByRole("textbox", { name: "Message" }), `${o.name}: the message box back on Chat`);

  // Back and forward move between the sections and the conversation.
  await page.goBack();
  await waitSeen(c, region(page, "Settings"), `${o.name}: Settings after Back`, 5000);
  await page.goForward();
  await waitSeen(c, page.locator(".msg.user", { hasText: question }).first(), `${o.name}: the conversation after Forward`, 5000);

  // Dark mode follows the system's preference.
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const light = await bg();
  await page.emulateMedia({ colorScheme: "dark" });
  const dark = await bg();
  c.check(light !== dark, `${o.name}: the page looks the same in dark mode (${light})`);
  await shot("dark");
  await page.emulateMedia({ colorScheme: "light" });
}

/** traces checks the Traces section: filter, own calls hidden, a row's details. */
async function traces(c, page, o) {
  const rows = page.getByRole("list", { name: "Traced calls" }).getByRole("listitem");
  await rows.filter({ hasText: "get_tools" }).first().waitFor({ timeout: 10000 });
  const names = async () => (await page.locator(".t-name").allInnerTexts()).map((s) => s.trim());
  c.check(!(await names()).includes("exchange_list"), `${o.name}: the page's own exchange_list calls show by default`);
  await page.getByRole("checkbox", { name: "Show this page's own calls" }).check();
  await until(async () => (await names()).includes("exchange_list"), "exchange_list rows once own calls are shown").catch((e) => c.fail(`${o.name}: ${e.message}`));
  await page.getByRole("checkbox", { name: "Show this page's own calls" }).uncheck();
  await page.getByRole("searchbox", { name: "Tool name contains" }).fill("get_t");
  await until(async () => {
    const n = await names();
    return n.length > 0 && n.every((x) => x.includes("get_t"));
  }, "the name filter").catch((e) => c.fail(`${o.name}: ${e.message}`));
  await noOverflow(c, page, `${o.name} Traces (filtered)`);
  await rows.first().getByRole("button").click();
  await expectSeen(c, page, page.getByRole("heading", { name: "get_tools" }), `${o.name}: a trace's detail view`);
  await expectSeen(c, page, page.getByText("Request id"), `${o.name}: the trace's request id`);
  await noOverflow(c, page, `${o.name} trace detail`);
  await page.screenshot({ path: `${o.shots}/${o.name}-trace-detail.png` });
  await axeCheck(c, page, `${o.name} trace detail`);
  await page.getByRole("button", { name: "Back to traces" }).click();
  await page.getByRole("searchbox", { name: "Tool name contains" }).fill("");
}

/**
 * settings adds a model key (first a refused one: the server's message
 * shows), then deletes it, which asks first. The key must not outlive the
 * check: the next chats would run on it instead of the fake model.
 */
async function settings(c, page, o) {
  await quotaBar(c, page, o);
  await preferences(c, page, o);
  const form = region(page, "Settings");
  await form.getByLabel("Provider").selectOption("ollama");
  await form.getByLabel("Label").fill("Local");
  await form.getByRole("button", { name: "Add key" }).click();
  await waitSeen(c, form.getByRole("alert").filter({ hasText: "ollama needs a base URL" }), `${o.name}: the server's message for a refused key`);
  await form.getByLabel("Provider").selectOption("openai");
  await form.getByLabel("Label").fill("Test key");
  await form.getByLabel("API key").fill("sk-test-123456789");
  await form.getByRole("button", { name: "Add key" }).click();
  const item = page.locator("#cred-list li", { hasText: "Test key" });
  await item.waitFor({ timeout: 5000 });
  await page.getByRole("button", { name: "Delete Test key" }).click();
  const confirm = page.getByRole("group", { name: "Delete Test key?" });
  await waitSeen(c, confirm, `${o.name}: the confirmation before deleting a key`, 3000);
  c.check((await item.count()) === 1, `${o.name}: the key was deleted before it was confirmed`);
  await page.screenshot({ path: `${o.shots}/${o.name}-settings-confirm.png` });
  if (await confirm.count()) {
    await confirm.getByRole("button", { name: "Cancel" }).click();
    c.check((await item.count()) === 1, `${o.name}: Cancel deleted the key`);
    await page.getByRole("button", { name: "Delete Test key" }).click();
    await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  }
  await item.waitFor({ state: "detached", timeout: 5000 }).catch(() => c.fail(`${o.name}: the confirmed delete left the key`));
}

/** callTool calls a tool through the REST API as the page's user (its token, if any). */
function callTool(page, tool, args = {}) {
  return page.evaluate(
    async ([tool, args]) => {
      const headers = { Accept: "application/json", "Content-Type": "application/json" };
      const token = localStorage.getItem("nexus.token");
      if (token) headers.Authorization = "Bearer " + token;
      const resp = await fetch("/api/tools/" + encodeURIComponent(tool) + ":call", { method: "POST", headers, body: JSON.stringify(args) });
      if (!resp.ok) throw new Error(tool + ": HTTP " + resp.status + " " + (await resp.text()));
      return resp.json();
    },
    [tool, args],
  );
}

/** quotaBar checks the quota as a bar: visible, inside the viewport, labelled, with the server's numbers. */
async function quotaBar(c, page, o) {
  const q = await callTool(page, "tn_user_quota");
  const bar = region(page, "Settings").getByRole("progressbar", { name: "prompts used today" });
  await waitSeen(c, bar, `${o.name}: the quota bar`, 5000);
  await expectSeen(c, page, bar, `${o.name}: the quota bar`);
  const box = await bar.boundingBox();
  const vp = page.viewportSize();
  c.check(box && box.x >= 0 && box.x + box.width <= vp.width && box.y >= 0 && box.y + box.height <= vp.height && box.width >= 100, `${o.name}: the quota bar is not wholly inside the viewport: ${JSON.stringify(box)} in ${JSON.stringify(vp)}`);
  const aria = await bar.evaluate((el) => [el.getAttribute("aria-valuenow"), el.getAttribute("aria-valuemin"), el.getAttribute("aria-valuemax"), el.value]);
  c.check(aria[0] === String(q.current) && aria[1] === "0" && aria[2] === String(q.max), `${o.name}: the quota bar says now/min/max ${aria.slice(0, 3).join("/")}, the server ${q.current}/0/${q.max}`);
  c.check(aria[3] === Math.min(q.current, Math.max(q.max, 1)), `${o.name}: the quota bar is filled to ${aria[3]}, not ${q.current}`);
  const label = region(page, "Settings").getByText(`${q.current} of ${q.max} prompts used today`);
  await expectSeen(c, page, label, `${o.name}: the quota's "${q.current} of ${q.max} prompts used today"`);
  await expectSeen(c, page, region(page, "Settings").getByText(/^Resets /), `${o.name}: the quota's reset time`);
}

/**
 * preferences checks the tool approval and theme preferences: the stored
 * value is shown, a change is saved ("Saved"), the Dark theme turns the page
 * dark at once and on a page loaded anew; then the stored values are put
 * back (the later chats must not wait for approval) and the page is light.
 */
async function preferences(c, page, o) {
  const stored = (await callTool(page, "tn_user_preferences_get")).preferences ?? {};
  const before = stored.toolApproval ?? "";
  const beforeTheme = stored.theme ?? "";
  const theme = page.locator("#pref-theme");
  const background = (p) => p.evaluate(() => getComputedStyle(document.body).backgroundColor);
  // The browser's system theme is light (Playwright's default).
  const dark = "rgb(21, 23, 27)";
  const light = "rgb(246, 247, 249)";
  const radio = (v) => page.locator(`#prefs input[name="toolApproval"][value="${v}"]`);
  const group = page.getByRole("group", { name: "Ask me before the chat runs a tool" });
  await waitSeen(c, group, `${o.name}: the tool approval preference`, 5000);
  await group.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, group.getByText("Ask before tools that may change something"), `${o.name}: the "writes" choice explained`);
  // This server has no chat.toolApproval: its default is never to ask.
  await expectSeen(c, page, group.getByText("This server's setting, now: never ask."), `${o.name}: what the server's default is`);
  c.check(await radio(before).isChecked(), `${o.name}: the stored tool approval "${before}" is not the checked choice`);
  const choice = before === "writes" ? "always" : "writes";
  const save = page.getByRole("button", { name: "Save preferences" });
  const saved = region(page, "Settings").getByRole("status").filter({ hasText: "Saved" });
  await radio(choice).check();
  await theme.selectOption("dark");
  await save.click();
  await waitSeen(c, saved, `${o.name}: "Saved" after saving the preferences`, 5000);
  c.check((await background(page)) === dark, `${o.name}: the page is not dark after saving the Dark theme (background ${await background(page)})`);
  await saved.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, saved, `${o.name}: "Saved"`);
  await page.screenshot({ path: `${o.shots}/${o.name}-settings-saved.png` });
  // Loaded anew (a second tab of the same browser: reloading this one would
  // lose the open conversation the later Back/Forward check returns to).
  const fresh = await page.context().newPage();
  try {
    await fresh.setViewportSize(page.viewportSize());
    await fresh.goto(o.base + "/#/settings", { waitUntil: "domcontentloaded" });
    const again = fresh.locator(`#prefs input[name="toolApproval"][value="${choice}"]`);
    await again.waitFor({ timeout: 10000 });
    c.check(await again.isChecked(), `${o.name}: the page loaded anew does not check the saved tool approval "${choice}"`);
    await again.scrollIntoViewIfNeeded().catch(() => {});
    await expectSeen(c, fresh, again, `${o.name}: the saved choice on the page loaded anew`);
    c.check((await background(fresh)) === dark, `${o.name}: the page loaded anew is not dark (background ${await background(fresh)})`);
    c.check((await fresh.locator("#pref-theme").inputValue()) === "dark", `${o.name}: the page loaded anew does not select the saved Dark theme`);
    await fresh.screenshot({ path: `${o.shots}/${o.name}-settings-reloaded.png` });
  } finally {
    await fresh.close();
  }
  await radio(before).check();
  await theme.selectOption(beforeTheme);
  await save.click();
  await waitSeen(c, saved, `${o.name}: "Saved" after restoring the preferences`, 5000);
  if (beforeTheme !== "dark") {
    await until(async () => (await background(page)) === light, "the page to be light again").catch(async () =>
      c.fail(`${o.name}: the page is not light again after restoring the theme "${beforeTheme}" (background ${await background(page)})`),
    );
  }
  const after = (await callTool(page, "tn_user_preferences_get")).preferences?.toolApproval ?? "";
  c.check(after === before, `${o.name}: the tool approval was not restored to "${before}" (it is "${after}")`);
}

/** toolParams opens belief_query and checks its parameters read as text, the raw schema behind "Raw schema". */
async function toolParams(c, page, o) {
  const item = page.locator("#tool-list li", { hasText: "belief_query" }).first();
  await item.locator("summary").first().click();
  const param = item.locator(".params li", { has: page.locator(".param-name", { hasText: /^query$/ }) }).first();
  await param.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, param.locator(".param-name"), `${o.name}: belief_query's parameter "query"`);
  await expectSeen(c, page, param.getByText("required", { exact: true }), `${o.name}: "required" by belief_query's query`);
  await expectSeen(c, page, param.getByText("Natural language search query", { exact: false }), `${o.name}: the description of belief_query's query`);
  c.check((await param.locator("pre").count()) === 0 && !(await param.evaluate((el) => !!el.closest("pre"))), `${o.name}: the parameter list is inside raw JSON`);
  const optional = item.locator(".params li", { has: page.locator(".param-name", { hasText: /^limit$/ }) }).first();
  await optional.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, optional.getByText("optional", { exact: true }), `${o.name}: "optional" by belief_query's limit`);
  const raw = item.getByLabel("Input schema");
  await expectUnseen(c, page, raw, `${o.name}: the raw schema before "Raw schema" is opened`);
  await item.getByText("Raw schema", { exact: true }).click();
  await raw.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, raw, `${o.name}: the raw schema after "Raw schema" is opened`);
  await noOverflow(c, page, `${o.name} Tools (parameters)`);
  await page.screenshot({ path: `${o.shots}/${o.name}-tool-params.png` });
}
