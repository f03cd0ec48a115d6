// conversations.mjs: renaming and deleting conversations in the chat's list
// (cmd/nexus TestWebUIInBrowser, against the real server and its fake
// model): Rename is an inline field (Escape cancels, Enter saves, a refused
// title shows the server's message), Delete asks first with focus on
// Cancel; the new title outlives a reload and the deleted entry is gone.
import { axeCheck } from "./axe.mjs";
import { expectSeen, expectUnseen, noOverflow, until, waitSeen } from "./lib.mjs";

/** conversationsScenario runs at one size; o: {base, shots, name, phone}. */
export async function conversationsScenario(c, page, o) {
  const shot = (what) => page.screenshot({ path: `${o.shots}/${o.name}-${what}.png` });
  const keep = `Conversation to rename (${o.name})`;
  const drop = `Conversation to delete (${o.name})`;
  const renamed = `Renamed plan (${o.name})`;
  await page.goto(o.base + "/", { waitUntil: "domcontentloaded" });

  // Two conversations, each titled by its first message; the second stays open.
  const input = page.getByRole("textbox", { name: "Message" });
  for (const text of [keep, drop]) {
    await page.goto(o.base + "/#/", { waitUntil: "domcontentloaded" });
    await input.fill(text);
    await input.press("Enter");
    await page.locator(".msg.assistant", { hasText: "Done." }).last().waitFor({ timeout: 20000 });
    await until(async () => /^#\/c\/.+/.test(await page.evaluate(() => location.hash)), `${o.name}: the URL of "${text}"`);
  }
  const openHash = await page.evaluate(() => location.hash);

  const list = page.getByRole("list", { name: "Your conversations" });
  const entry = (title) => list.getByRole("link", { name: title });
  const openList = async () => {
    if (o.phone) await page.getByRole("button", { name: "Conversations", exact: true }).click();
  };
  await openList();
  await waitSeen(c, entry(keep), `${o.name}: the entry "${keep}"`);
  await waitSeen(c, entry(drop), `${o.name}: the entry "${drop}"`);

  // Rename: Escape cancels and changes nothing.
  const renameButton = list.getByRole("button", { name: `Rename “${keep}”` });
  await expectSeen(c, page, renameButton, `${o.name}: the Rename button of "${keep}"`);
  await renameButton.click();
  const field = list.getByRole("textbox", { name: `New title for “${keep}”` });
  await waitSeen(c, field, `${o.name}: the rename field`, 3000);
  await expectSeen(c, page, field, `${o.name}: the rename field`);
  c.check((await field.inputValue()) === keep, `${o.name}: the rename field does not start with the title: ${await field.inputValue()}`);
  c.check(await field.evaluate((el) => el === document.activeElement), `${o.name}: the rename field does not take focus`);
  await field.fill("Not this");
  await field.press("Escape");
  await expectUnseen(c, page, field, `${o.name}: the rename field after Escape`);
  await expectSeen(c, page, entry(keep), `${o.name}: the unchanged entry after Escape`);
  if (o.phone) await expectSeen(c, page, entry(keep), `${o.name}: the drawer after Escape in the field`);

  // A blank title is refused with the server's message.
  await renameButton.click();
  await field.fill("   ");
  await field.press("Enter");
  const alert = list.getByRole("alert").filter({ hasText: "title" });
  await waitSeen(c, alert, `${o.name}: the server's message for a blank title`, 5000);
  c.check(/must not be empty/.test(await alert.innerText().catch(() => "")), `${o.name}: the refusal does not say why: ${await alert.innerText().catch(() => "")}`);
  await expectSeen(c, page, alert, `${o.name}: the server's message for a blank title`);

  // Enter saves the new title.
  await field.fill(renamed);
  await noOverflow(c, page, `${o.name} rename`);
  await shot("conversation-rename");
  await axeCheck(c, page, `${o.name} rename`);
  await field.press("Enter");
  await waitSeen(c, entry(renamed), `${o.name}: the renamed entry`, 5000);
  await expectSeen(c, page, entry(renamed), `${o.name}: the renamed entry`);
  c.check((await entry(keep).count()) === 0, `${o.name}: the old title is still listed`);
  await expectUnseen(c, page, field, `${o.name}: the rename field after saving`);

  // Delete asks first, with focus on Cancel; Cancel keeps the conversation.
  const deleteButton = list.getByRole("button", { name: `Delete “${drop}”` });
  await deleteButton.click();
  const confirm = list.getByRole("group", { name: `Delete “${drop}”?` });
  await waitSeen(c, confirm, `${o.name}: the confirmation before deleting`, 3000);
  await expectSeen(c, page, confirm.getByRole("button", { name: "Delete", exact: true }), `${o.name}: the confirmation's Delete button`);
  const cancel = confirm.getByRole("button", { name: "Cancel" });
  await expectSeen(c, page, cancel, `${o.name}: the confirmation's Cancel button`);
  c.check(await cancel.evaluate((el) => el === document.activeElement).catch(() => false), `${o.name}: the confirmation does not put focus on Cancel`);
  await noOverflow(c, page, `${o.name} delete confirmation`);
  await shot("conversation-delete-confirm");
  await axeCheck(c, page, `${o.name} delete confirmation`);
  await cancel.click();
  await expectUnseen(c, page, confirm, `${o.name}: the confirmation after Cancel`);
  await expectSeen(c, page, entry(drop), `${o.name}: the entry after Cancel`);

  // Confirmed, the open conversation is deleted and a new chat shows.
  await deleteButton.click();
  await confirm.getByRole("button", { name: "Delete", exact: true }).click();
  await entry(drop)
    .waitFor({ state: "detached", timeout: 5000 })
    .catch(() => c.fail(`${o.name}: the confirmed delete left "${drop}" in the list`));
  await until(async () => (await page.evaluate(() => location.hash)) !== openHash, `${o.name}: leaving the deleted conversation`).catch((e) => c.fail(e.message));
  c.check(["", "#/"].includes(await page.evaluate(() => location.hash)), `${o.name}: deleting the open conversation does not open a new chat`);
  // (On a phone the drawer closes with the route change, showing the new chat.)
  await waitSeen(c, page.getByText("Ask about BC course transfers"), `${o.name}: the new chat after deleting the open conversation`, 5000);
  await expectUnseen(c, page, page.locator(".msg.user", { hasText: drop }), `${o.name}: the deleted conversation's message`);

  // After a reload: the new title, and no deleted entry.
  await page.reload({ waitUntil: "domcontentloaded" });
  await openList();
  await waitSeen(c, entry(renamed), `${o.name}: the renamed entry after a reload`);
  await expectSeen(c, page, entry(renamed), `${o.name}: the renamed entry after a reload`);
  c.check((await entry(drop).count()) === 0, `${o.name}: the deleted conversation is listed after a reload`);
  c.check((await entry(keep).count()) === 0, `${o.name}: the old title is listed after a reload`);
}
