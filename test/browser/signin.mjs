// signin.mjs: the sign-in screen. A kept token the server refuses (a real
// 401 from nexus serve) signs out with "revoked"; a server that wants a
// token (every /api answer a 401, scripted) shows the screen alone; a wrong
// token is refused with a message.
import { axeCheck } from "./axe.mjs";
import { expectSeen, expectUnseen, noOverflow } from "./lib.mjs";

/** signinScenario runs at one size; o: {base, shots, name}. */
export async function signinScenario(c, page, o) {
  // A token kept from an earlier visit that no longer authenticates.
  await page.addInitScript(() => {
    if (!sessionStorage.getItem("test.seeded")) {
      sessionStorage.setItem("test.seeded", "1");
      localStorage.setItem("nexus.token", "nxs_revoked_for_the_test");
    }
  });
  await page.goto(o.base + "/", { waitUntil: "domcontentloaded" });
  const heading = page.getByRole("heading", { name: "Sign in" });
  await heading.waitFor({ timeout: 10000 }).catch(() => c.fail(`${o.name}: a refused token does not show the sign-in screen`));
  await expectSeen(c, page, heading, `${o.name}: the sign-in heading`);
  await expectSeen(c, page, page.getByText("revoked"), `${o.name}: the "token revoked" message`);
  await expectUnseen(c, page, page.getByRole("region", { name: "Chat", exact: true }), `${o.name}: the chat behind the sign-in screen`);
  await expectUnseen(c, page, page.getByRole("textbox", { name: "Message" }), `${o.name}: the message box behind the sign-in screen`);
  await noOverflow(c, page, `${o.name} sign-in`);
  await page.screenshot({ path: `${o.shots}/${o.name}-signin-revoked.png` });

  // A wrong token: the server's refusal is shown, nothing is kept.
  await page.getByLabel("Token").fill("nxs_not_a_token");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page
    .getByRole("alert")
    .filter({ hasText: "does not sign in" })
    .first()
    .waitFor({ timeout: 10000 })
    .catch(() => c.fail(`${o.name}: a wrong token shows no error`));
  const kept = await page.evaluate(() => Object.values(localStorage).includes("nxs_not_a_token"));
  c.check(!kept, `${o.name}: a refused token was kept`);

  // A server that asks every request for a token, with none kept.
  await page.evaluate(() => localStorage.clear());
  await page.route("**/api/**", (r) =>
    r.fulfill({ status: 401, contentType: "application/json", body: JSON.stringify({ error: { code: "UNAUTHORIZED", message: "sign in first" } }) }),
  );
  await page.reload({ waitUntil: "domcontentloaded" });
  await heading.waitFor({ timeout: 10000 }).catch(() => c.fail(`${o.name}: a 401 does not show the sign-in screen`));
  await expectSeen(c, page, page.getByLabel("Token"), `${o.name}: the token field`);
  await expectUnseen(c, page, page.getByText("revoked"), `${o.name}: "revoked" without a kept token`);
  await expectUnseen(c, page, page.getByRole("textbox", { name: "Message" }), `${o.name}: the message box while signed out`);
  await page.screenshot({ path: `${o.shots}/${o.name}-signin.png` });
  await axeCheck(c, page, `${o.name} sign-in`);
  await page.unroute("**/api/**");
}
