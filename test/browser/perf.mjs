// perf.mjs: numbers measured in Chromium and printed (not asserted): the
// first render of / (median of 5 fresh loads) and a long streamed answer
// (about 10,000 tokens of Markdown with tables and code from the fake
// model, cmd/nexus TestWebUIInBrowser's "long answer"): long tasks during
// the stream and how many animation frames the screen was behind the last
// token received.

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const ms = (x) => (x === undefined ? "n/a" : x.toFixed(0) + " ms");

/** firstRender loads / five times, each in a fresh context (no cache), and prints the medians. */
export async function firstRender(browser, base, size, name) {
  const fcp = [];
  const dcl = [];
  const load = [];
  for (let i = 0; i < 5; i++) {
    const ctx = await browser.newContext({ viewport: size });
    const page = await ctx.newPage();
    await page.goto(base + "/", { waitUntil: "load" });
    const m = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const nav = () => performance.getEntriesByType("navigation")[0];
          new PerformanceObserver((list, obs) => {
            const e = list.getEntries().find((x) => x.name === "first-contentful-paint");
            if (!e) return;
            obs.disconnect();
            resolve({ fcp: e.startTime, dcl: nav().domContentLoadedEventEnd, load: nav().loadEventEnd });
          }).observe({ type: "paint", buffered: true });
        }),
    );
    fcp.push(m.fcp);
    dcl.push(m.dcl);
    load.push(m.load);
    await ctx.close();
  }
  console.log(
    `perf: first render of / at ${name}: first-contentful-paint median ${ms(median(fcp))} (of ${fcp.map((x) => x.toFixed(0)).join(", ")}); DOMContentLoaded ${ms(median(dcl))}; load ${ms(median(load))}`,
  );
}

/** init runs in the page before its scripts: counts token frames and samples the screen each animation frame. */
function init() {
  const P = (window.__perf = { frame: 0, armed: false, chars: 0, recv: [], samples: [], long: [] });
  const Orig = window.WebSocket;
  window.WebSocket = class extends Orig {
    constructor(...a) {
      super(...a);
      // Registered before the page's own listener: the receipt is counted first.
      this.addEventListener("message", (m) => {
        if (!P.armed) return;
        let f;
        try {
          f = JSON.parse(m.data);
        } catch (_) {
          return;
        }
        if (f.type !== "token" || typeof f.content !== "string") return;
        P.chars += f.content.length;
        let max = -1;
        for (const x of f.content.matchAll(/\bt(\d+)\b/g)) max = Math.max(max, Number(x[1]));
        if (max >= 0) P.recv.push({ frame: P.frame, n: max, t: performance.now() });
      });
    }
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) P.long.push({ start: e.startTime, dur: e.duration });
  }).observe({ type: "longtask", buffered: true });
  const tick = () => {
    P.frame++;
    if (P.armed) {
      const msgs = document.querySelectorAll(".msg.assistant");
      const last = msgs[msgs.length - 1];
      let m = -1;
      if (last) for (const x of (last.textContent || "").slice(-200).matchAll(/\bt(\d+)\b/g)) m = Math.max(m, Number(x[1]));
      P.samples.push({ frame: P.frame, m, t: performance.now() });
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}

/** longAnswer sends a prompt the fake answers with about 10,000 tokens and prints what the page did meanwhile. */
export async function longAnswer(c, browser, base, size, name) {
  const ctx = await browser.newContext({ viewport: size, reducedMotion: "reduce" });
  const page = await ctx.newPage();
  page.on("pageerror", (e) => c.fail(`${name} long answer: page error: ${e.message}`));
  await page.addInitScript(init);
  await page.goto(base + "/", { waitUntil: "domcontentloaded" });
  const input = page.getByRole("textbox", { name: "Message" });
  await input.waitFor({ timeout: 10000 });
  await input.fill("Please give me a long answer.");
  const start = await page.evaluate(() => {
    window.__perf.armed = true;
    return performance.now();
  });
  await input.press("Enter");
  await page.locator(".msg.assistant", { hasText: "End of the long answer." }).last().waitFor({ timeout: 90000 });
  await page.getByRole("button", { name: "Send", exact: true }).waitFor({ timeout: 10000 });
  // Two more frames so the last samples are taken.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const r = await page.evaluate((start) => {
    const P = window.__perf;
    P.armed = false;
    let behind = 0;
    let behindMs = 0;
    let i = 0;
    // For each sample, the earliest token frame (already received) whose marker the screen does not show yet.
    for (const s of P.samples) {
      while (i < P.recv.length && P.recv[i].n <= s.m) i++;
      if (i < P.recv.length && P.recv[i].frame < s.frame) {
        behind = Math.max(behind, s.frame - P.recv[i].frame);
        behindMs = Math.max(behindMs, s.t - P.recv[i].t);
      }
    }
    const end = P.samples.length ? P.samples[P.samples.length - 1].t : performance.now();
    const long = P.long.filter((e) => e.start >= start && e.start <= end && e.dur > 50);
    const first = P.recv[0]?.t ?? start;
    const lastRecv = P.recv[P.recv.length - 1]?.t ?? start;
    return {
      tokens: P.recv.length,
      chars: P.chars,
      stream: lastRecv - first,
      frames: P.samples.length,
      behind,
      behindMs,
      longCount: long.length,
      longest: long.reduce((a, e) => Math.max(a, e.dur), 0),
      longTotal: long.reduce((a, e) => a + e.dur, 0),
      // When each long task began, from the first token received (ms).
      longAt: long.map((e) => Math.round(e.start - first) + "+" + Math.round(e.dur)),
    };
  }, start);
  c.check(r.tokens > 5000, `${name} long answer: only ${r.tokens} token frames with markers were received`);
  console.log(
    `perf: long streamed answer at ${name}: ${r.tokens} token frames, ${r.chars} characters over ${ms(r.stream)}; long tasks over 50 ms: ${r.longCount} (longest ${ms(r.longest)}, together ${ms(r.longTotal)}; at ${r.longAt.join(", ") || "-"} ms from the first token); max frames behind the last token received: ${r.behind} (at most ${ms(r.behindMs)}; ${r.frames} frames in ${ms(r.stream)})`,
  );
  await ctx.close();
}
