// socket.mjs: the chat over a scripted WebSocket (Playwright's
// routeWebSocket stands in for /ws; REST still reaches nexus serve): a tool
// call waiting for approval, a missing model pointing to Settings, Escape
// stopping a turn, and a dropped connection that reconnects and sends the
// message again.
import { expectSeen, expectUnseen, until, waitSeen } from "./lib.mjs";

const useTool = JSON.stringify({ tool: { toolbox: "nexus", server: "vkb", tool: "session_list" }, arguments: {} });

/** socketScenario runs at one size; o: {base, shots, name, phone}. */
export async function socketScenario(c, page, o) {
  const got = []; // frames the page sent
  let connections = 0;
  let drops = 0;
  await page.routeWebSocket("**/ws", (ws) => {
    connections++;
    const send = (f) => ws.send(JSON.stringify({ timestamp: new Date().toISOString(), ...f }));
    ws.onMessage((data) => {
      const f = JSON.parse(String(data));
      got.push(f);
      if (f.type === "message" && f.content === "approve?") {
        const conv = "conv-approval";
        send({ type: "tool_start", conversation_id: conv, tool_call_id: "t1", tool_name: "use_tool", tool_input: useTool, source: "local" });
        send({ type: "approval_request", conversation_id: conv, tool_call_id: "t1", tool_name: "use_tool", tool_input: useTool, source: "local", timeout_seconds: 120 });
      }
      if (f.type === "approval") {
        send({ type: "tool_complete", conversation_id: f.conversation_id, tool_call_id: f.tool_call_id, tool_name: "use_tool", tool_result: '{"sessions":[]}', source: "local" });
        send({ type: "token", conversation_id: f.conversation_id, content: f.approved ? "Approved and ran." : "Denied." });
        send({ type: "complete", conversation_id: f.conversation_id, message_id: "m1" });
      }
      if (f.type === "message" && f.content === "no model") {
        send({ type: "error", conversation_id: "conv-nomodel", code: "MODEL_NOT_CONFIGURED", message: "no language model is configured" });
      }
      if (f.type === "message" && f.content === "slow") {
        send({ type: "token", conversation_id: "conv-slow", content: "Thinking hard" });
      }
      if (f.type === "cancel") {
        send({ type: "error", conversation_id: f.conversation_id || "conv-slow", code: "CANCELLED", message: "cancelled" });
      }
      if (f.type === "message" && f.content === "policy") {
        ws.close({ code: 1008, reason: "too many WebSockets of this user" });
      }
      if (f.type === "message" && f.content === "revoked") {
        if (!got.some((x) => x.type === "auth")) {
          send({ type: "error", code: "UNAUTHORIZED", message: "the token was revoked" });
          ws.close({ code: 1008, reason: "unauthorized" });
        } else {
          send({ type: "token", conversation_id: "conv-revoked", content: "Signed in again." });
          send({ type: "complete", conversation_id: "conv-revoked", message_id: "m3" });
        }
      }
      if (f.type === "message" && f.content === "drop") {
        drops++;
        if (drops === 1) {
          ws.close({ code: 1011, reason: "scripted drop" });
        } else {
          send({ type: "token", conversation_id: "conv-drop", content: "Back again." });
          send({ type: "complete", conversation_id: "conv-drop", message_id: "m2" });
        }
      }
    });
  });
  await page.goto(o.base + "/", { waitUntil: "domcontentloaded" });
  const input = page.getByRole("textbox", { name: "Message" });
  const say = async (text) => {
    await input.fill(text);
    await input.press("Enter");
  };
  const newConversation = async () => {
    await page.evaluate(() => {
      location.hash = "#/";
    });
    await page.getByText("Does MATH 1171 at Langara transfer to UBC?").first().waitFor({ timeout: 5000 }).catch(() => {});
  };
  const step = async (what, fn) => {
    try {
      await fn();
    } catch (e) {
      c.fail(`${o.name}: ${what}: ${String(e.message).split("\n")[0]}`);
    }
  };

  // Approval: Approve / Deny with the time left, in the tool's card.
  await step("approval", async () => {
    await say("approve?");
    const approve = page.getByRole("button", { name: "Approve" });
    await approve.waitFor({ timeout: 10000 });
    await expectSeen(c, page, approve, `${o.name}: the Approve button`);
    await expectSeen(c, page, page.getByRole("button", { name: "Deny" }), `${o.name}: the Deny button`);
    const card = page.locator(".tool").last();
    c.check(/session_list/.test(await card.locator("summary").innerText()), `${o.name}: the approval card does not name session_list`);
    c.check(/\d+ s left/.test(await card.innerText()), `${o.name}: the approval shows no countdown`);
    await page.screenshot({ path: `${o.shots}/${o.name}-approval.png` });
    await approve.click();
    await page.locator(".msg", { hasText: "Approved and ran." }).waitFor({ timeout: 10000 });
    const answer = got.find((f) => f.type === "approval");
    c.check(answer && answer.approved === true && answer.tool_call_id === "t1" && answer.conversation_id === "conv-approval",
      `${o.name}: the approval frame: ${JSON.stringify(answer)}`);
    c.check(/done/.test(await card.locator("summary").innerText()), `${o.name}: the approved card is not done`);
  });

  // No model: the error points to Settings.
  await step("no model", async () => {
    await newConversation();
    await say("no model");
    const link = page.getByRole("link", { name: "Add your model key in Settings" });
    await link.waitFor({ timeout: 10000 }).catch(() => c.fail(`${o.name}: MODEL_NOT_CONFIGURED does not point to Settings`));
    if (await link.count()) {
      await link.click();
      await page.getByRole("region", { name: "Settings", exact: true }).waitFor({ timeout: 5000 }).catch(() => {});
      await expectSeen(c, page, page.getByRole("region", { name: "Settings", exact: true }), `${o.name}: Settings from the missing-model error`);
      await page.goBack();
    }
  });

  // Escape stops a running turn.
  await step("Escape", async () => {
    await newConversation();
    await say("slow");
    await page.locator(".msg", { hasText: "Thinking hard" }).waitFor({ timeout: 10000 });
    await expectSeen(c, page, page.getByRole("button", { name: "Stop", exact: true }), `${o.name}: the Stop button while answering`);
    await page.keyboard.press("Escape");
    await until(() => got.some((f) => f.type === "cancel"), "a cancel frame after Escape").catch((e) => c.fail(`${o.name}: ${e.message}`));
    await page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 10000 }).catch(() => c.fail(`${o.name}: Send does not come back after Stop`));
  });

  // A dropped connection: reconnect, and the message goes again.
  await step("reconnect", async () => {
    await newConversation();
    const before = connections;
    await say("drop");
    await page.locator(".msg", { hasText: "Back again." }).waitFor({ timeout: 15000 }).catch(() => c.fail(`${o.name}: no answer after the connection dropped`));
    c.check(connections > before, `${o.name}: no new connection after the drop (${connections} connections)`);
    c.check((await page.locator(".msg.user", { hasText: "drop" }).count()) === 1, `${o.name}: the resent message shows twice`);
  });

  // 1008 while REST still takes us (a policy, not the token): reconnect, no sign-in.
  await step("1008", async () => {
    await newConversation();
    const before = connections;
    await say("policy");
    await until(() => connections > before, "a new connection after a 1008 close").catch((e) => c.fail(`${o.name}: ${e.message}`));
    await expectUnseen(c, page, page.getByRole("heading", { name: "Sign in" }), `${o.name}: the sign-in screen after a 1008 that REST does not confirm`);
    await waitSeen(c, page.locator(".msg", { hasText: "Not sent" }), `${o.name}: "Not sent" on the message a 1008 refused`);
    await waitSeen(c, page.getByRole("button", { name: "Send", exact: true }), `${o.name}: the Send button after a 1008`);
  });

  // An UNAUTHORIZED error frame: the sign-in screen, alone.
  await step("UNAUTHORIZED", async () => {
    await say("revoked");
    await waitSeen(c, page.getByRole("heading", { name: "Sign in" }), `${o.name}: the sign-in screen after an UNAUTHORIZED frame`);
    await expectUnseen(c, page, page.getByRole("textbox", { name: "Message" }), `${o.name}: the message box after an UNAUTHORIZED frame`);
  });

  // Signing in again sends the token first and then the message that waited.
  await step("sign in again", async () => {
    const token = "nxs_test_token";
    // nexus serve (loopback: no token needed) would refuse the made-up
    // token: requests carrying it reach it without.
    await page.route("**/api/**", (r) => {
      const headers = { ...r.request().headers() };
      if (headers["authorization"] !== "Bearer " + token) return r.fallback();
      delete headers["authorization"];
      return r.continue({ headers });
    });
    await page.getByLabel("Token").fill(token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitSeen(c, page.locator(".msg", { hasText: "Signed in again." }), `${o.name}: the answer to the message that waited for the sign-in`);
    const auth = got.find((f) => f.type === "auth");
    c.check(auth && auth.token === token, `${o.name}: no auth frame with the new token: ${JSON.stringify(auth)}`);
    const afterAuth = got.slice(got.indexOf(auth));
    c.check(afterAuth.some((f) => f.type === "message" && f.content === "revoked"), `${o.name}: the message that waited was not sent after the auth frame`);
    c.check((await page.locator(".msg.user", { hasText: "revoked" }).count()) === 1, `${o.name}: the waiting message shows twice`);
    c.check(await page.evaluate((t) => Object.values(localStorage).includes(t), token), `${o.name}: the token is not kept`);
    await expectSeen(c, page, page.getByRole("button", { name: "Sign out" }), `${o.name}: the Sign out button`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await waitSeen(c, page.getByRole("heading", { name: "Sign in" }), `${o.name}: the sign-in screen after Sign out`);
    c.check(!(await page.evaluate((t) => Object.values(localStorage).includes(t), token)), `${o.name}: the token is kept after Sign out`);
    await page.unroute("**/api/**");
  });
}
