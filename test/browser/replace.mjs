// replace.mjs: Edit and resend, and Regenerate, replace the last turn: on
// screen the thread keeps one question and one answer, and a reload shows
// the same (the server replaced the stored turn too). The fake model
// answers "You said: " and the last message (cmd/nexus
// TestWebUISignInBeyondLoopback).
import { expectSeen, waitSeen } from "./lib.mjs";

/** replaceScenario runs in a signed-in page whose conversation holds one turn, question ask. */
export async function replaceScenario(c, page, o, ask) {
  const users = page.locator(".msg.user");
  const answers = page.locator(".msg.assistant");
  const counts = async () => [await users.count(), await answers.count()];
  const one = async (what) => {
    const [u, a] = await counts();
    c.check(u === 1 && a === 1, `${o.name}: ${what}: ${u} questions and ${a} answers on screen, want 1 and 1`);
  };

  // Edit and resend.
  await users.last().getByRole("button", { name: "Edit and resend" }).click();
  const message = page.getByRole("textbox", { name: "Message" });
  c.check((await message.inputValue()) === ask, `${o.name}: Edit and resend did not put the question in the message box`);
  const status = page.getByRole("status").filter({ hasText: "Editing your last message" });
  await expectSeen(c, page, status, `${o.name}: the "Editing your last message" line`);
  const edited = ask + ", edited";
  await message.fill(edited);
  await page.keyboard.press("Enter");
  await waitSeen(c, answers.filter({ hasText: "You said: " + edited }).first(), `${o.name}: the answer to the edited question`, 20000);
  await page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 10000 });
  await one("after Edit and resend");
  c.check((await users.first().innerText()).includes(edited), `${o.name}: the edited question is not the one on screen`);
  await page.screenshot({ path: `${o.shots}/${o.name}-edited.png` });

  // Regenerate. The answer's text is the same: the old element is marked,
  // to wait for the new one (a keyed, new element) rather than the old.
  await answers.last().evaluate((el) => el.setAttribute("data-old", ""));
  await answers.last().getByRole("button", { name: "Regenerate" }).click();
  const fresh = page.locator(".msg.assistant:not([data-old])", { hasText: "You said: " + edited });
  await waitSeen(c, fresh.first(), `${o.name}: the regenerated answer`, 20000);
  await waitSeen(c, page.getByRole("button", { name: "Send", exact: true }), `${o.name}: the Send button after Regenerate`, 20000);
  c.check((await page.locator(".msg.assistant[data-old]").count()) === 0, `${o.name}: the answer Regenerate replaced is still on screen`);
  await one("after Regenerate");

  // The server replaced the stored turn too.
  await page.reload({ waitUntil: "domcontentloaded" });
  await waitSeen(c, answers.filter({ hasText: "You said: " + edited }).first(), `${o.name}: the regenerated answer after a reload`);
  await one("after a reload");
  c.check((await users.first().innerText()).includes(edited), `${o.name}: after a reload the stored question is not the edited one`);
}
