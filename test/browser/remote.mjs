// remote.mjs: signing in to a Nexus served beyond loopback, with a real
// token, in a real browser. Run by cmd/nexus TestWebUISignInBeyondLoopback:
//   NODE_PATH=.../node_modules node remote.mjs BASE_URL SCREENSHOT_DIR CHROMIUM TOKEN
// nexus serve listens on 0.0.0.0, so nothing is trusted for being local: at
// a desktop's size and a phone's, the page loads and shows the sign-in
// screen alone; a wrong token is refused with a message; the real token
// signs in, the chat answers, a reload stays signed in, Edit and resend and
// Regenerate replace the turn (replace.mjs), tools wait for Approve / Deny
// once the preference asks (approve.mjs), and Sign out comes back to the
// sign-in screen with the token forgotten. Nothing is scripted between the
// browser and the server.
import { createRequire } from "node:module";
import { Checks, expectSeen, expectUnseen, noOverflow, waitSeen } from "./lib.mjs";
import { axeCheck } from "./axe.mjs";
import { replaceScenario } from "./replace.mjs";
import { approveScenario } from "./approve.mjs";

const require = createRequire((process.env.NODE_PATH || ".") + "/");
const { chromium } = require("playwright-core");

const [base, shots, executablePath, token] = process.argv.slice(2);
const c = new Checks();
const browser = await chromium.launch({
  executablePath,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});

const sizes = [
  { name: "desktop", size: { width: 1280, height: 800 } },
  { name: "phone", size: { width: 390, height: 844 } },
];
try {
  for (const { name, size } of sizes) {
    const ctx = await browser.newContext({ viewport: size, reducedMotion: "reduce" });
    const page = await ctx.newPage();
    // The server's refusals (401) are logged by Chromium as console errors.
    page.on("console", (m) => {
      if (m.type() === "error" && !m.text().includes("401")) c.fail(`${name}: console error: ${m.text()}`);
    });
    page.on("pageerror", (e) => c.fail(`${name}: page error: ${e.message}`));
    try {
      await scenario(page, name);
    } catch (e) {
      c.fail(`${name}: ${e.stack || e}`);
    }
    await ctx.close();
  }
} finally {
  await browser.close();
}

async function scenario(page, name) {
  const resp = await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  c.check(resp && resp.status() === 200, `${name}: GET / without a token answered ${resp && resp.status()}, want the page (200)`);
  const heading = page.getByRole("heading", { name: "Sign in" });
  const message = page.getByRole("textbox", { name: "Message" });
  if (!(await waitSeen(c, heading, `${name}: the sign-in screen without a token`))) return;
  await expectSeen(c, page, page.getByLabel("Token"), `${name}: the token field`);
  await expectUnseen(c, page, message, `${name}: the message box before signing in`);
  await noOverflow(c, page, `${name} sign-in`);
  await page.screenshot({ path: `${shots}/${name}-remote-signin.png` });

  await page.getByLabel("Token").fill("nxs_" + "A".repeat(43));
  await page.getByRole("button", { name: "Sign in" }).click();
  await waitSeen(c, page.getByRole("alert").filter({ hasText: "does not sign in" }).first(), `${name}: the refusal of a wrong token`);
  await expectUnseen(c, page, message, `${name}: the message box after a wrong token`);

  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  if (!(await waitSeen(c, message, `${name}: the message box once signed in`))) return;
  await expectUnseen(c, page, heading, `${name}: the sign-in screen once signed in`);
  await expectSeen(c, page, page.getByRole("button", { name: "Sign out" }), `${name}: the Sign out button`);

  await message.fill("Hello from beyond loopback");
  await page.keyboard.press("Enter");
  await waitSeen(c, page.locator(".msg.assistant", { hasText: "You said: Hello from beyond loopback" }).last(), `${name}: the model's answer to the signed-in user`, 20000);
  await noOverflow(c, page, `${name} signed in`);
  await axeCheck(c, page, `${name} signed in beyond loopback`);
  await page.screenshot({ path: `${shots}/${name}-remote-chat.png` });

  await page.reload({ waitUntil: "domcontentloaded" });
  await waitSeen(c, message, `${name}: the message box after a reload`);
  await expectUnseen(c, page, heading, `${name}: the sign-in screen after a reload`);
  await waitSeen(c, page.locator(".msg.user", { hasText: "Hello from beyond loopback" }).first(), `${name}: the conversation after a reload`);

  // Edit and resend, Regenerate (replace.mjs).
  await page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 10000 });
  await replaceScenario(c, page, { name, shots }, "Hello from beyond loopback");
  // Tool approval with the real server (approve.mjs).
  await approveScenario(c, page, { name, shots });

  await page.getByRole("button", { name: "Sign out" }).click();
  await waitSeen(c, heading, `${name}: the sign-in screen after Sign out`);
  await expectUnseen(c, page, message, `${name}: the message box after Sign out`);
  const kept = await page.evaluate((t) => Object.values(localStorage).some((v) => v.includes(t)), token);
  c.check(!kept, `${name}: the token is still stored after Sign out`);
  await page.screenshot({ path: `${shots}/${name}-remote-signedout.png` });
}

if (c.failures.length) {
  console.error(`${c.failures.length} failure(s)`);
  process.exitCode = 1;
} else {
  console.log("ok");
}
