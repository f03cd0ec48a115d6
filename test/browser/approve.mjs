// approve.mjs: tool approval against the real server. The user chooses
// "Ask before every tool" in Settings; a question the fake model answers
// with two tool calls (get_tools, and session_list through use_tool) shows
// an Approve / Deny group in each card; one approved runs, one denied goes
// back to the model as a tool error, and the answer says so (cmd/nexus
// TestWebUISignInBeyondLoopback).
import { expectSeen, waitSeen } from "./lib.mjs";

/** approveScenario runs in a signed-in page. */
export async function approveScenario(c, page, o) {
  await page.getByRole("link", { name: "Settings" }).click();
  const always = page.locator('#prefs input[name="toolApproval"][value="always"]');
  await always.waitFor({ timeout: 10000 });
  await always.check();
  await page.getByRole("button", { name: "Save preferences" }).click();
  await waitSeen(c, page.getByRole("status").filter({ hasText: "Saved" }), `${o.name}: "Saved" after choosing to be asked`, 5000);

  await page.getByRole("link", { name: "Chat" }).click();
  await page.getByRole("link", { name: "New" }).click();
  const message = page.getByRole("textbox", { name: "Message" });
  await message.waitFor({ timeout: 10000 });
  await message.fill("Please use two tools");
  await page.keyboard.press("Enter");

  const first = page.getByRole("group", { name: "Approve get_tools?" });
  const second = page.getByRole("group", { name: "Approve session_list?" });
  if (!(await waitSeen(c, first, `${o.name}: the approval of get_tools`, 20000))) return;
  await first.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, first.getByRole("button", { name: "Approve" }), `${o.name}: get_tools' Approve button`);
  await page.screenshot({ path: `${o.shots}/${o.name}-approval-real.png` });
  await first.getByRole("button", { name: "Approve" }).click();
  if (!(await waitSeen(c, second, `${o.name}: the approval of session_list`, 20000))) return;
  await second.scrollIntoViewIfNeeded().catch(() => {});
  await expectSeen(c, page, second.getByRole("button", { name: "Deny" }), `${o.name}: session_list's Deny button`);
  await second.getByRole("button", { name: "Deny" }).click();

  const answer = page.locator(".msg.assistant", { hasText: "get_tools ran, session_list denied." });
  await waitSeen(c, answer.first(), `${o.name}: the answer after one approval and one denial`, 20000);
  // The cards: get_tools done, session_list an error (denied).
  const card = (tool) => page.locator(".msg.assistant .tool").filter({ has: page.locator(".tool-name", { hasText: tool }) }).last();
  c.check((await card("get_tools").locator(".state").innerText()) === "done", `${o.name}: the approved get_tools card does not say done`);
  c.check((await card("session_list").locator(".state").innerText()) === "error", `${o.name}: the denied session_list card does not say error`);
  await expectSeen(c, page, answer.first(), `${o.name}: the answer`);
  await page.screenshot({ path: `${o.shots}/${o.name}-approval-answered.png` });
}
